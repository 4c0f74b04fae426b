package bookinfo.reviews;

import java.util.concurrent.TimeUnit;
import org.apache.tomcat.util.net.Nio2Endpoint;
import org.apache.tomcat.util.threads.TaskThreadFactory;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;

/**
 * Tomcat's NIO2 endpoint whose own worker pool is built exactly as Tomcat builds it (same sizes,
 * names, idle time, unbounded queueing at maxThreads, shut down with the connector) except for its
 * queue: LifoTaskQueue, which hands each task to the most recently idle worker.
 */
class LifoNio2Endpoint extends Nio2Endpoint {

    @Override
    public void createExecutor() {
        LifoTaskQueue queue = new LifoTaskQueue(getMaxQueueSize());
        TaskThreadFactory threads = new TaskThreadFactory(getName() + "-exec-", getDaemon(), getThreadPriority());
        ThreadPoolExecutor pool = new ThreadPoolExecutor(getMinSpareThreads(), getMaxThreads(),
                getThreadsMaxIdleTime(), TimeUnit.MILLISECONDS, queue, threads);
        queue.setParent(pool);
        setExecutor(pool);
        // setExecutor marks an executor as the application's; this one is the endpoint's own, which
        // the endpoint shuts down when it stops and which NIO2 requires for its channel group.
        internalExecutor = true;
    }
}
