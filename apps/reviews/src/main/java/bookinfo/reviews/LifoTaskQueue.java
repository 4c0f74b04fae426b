package bookinfo.reviews;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.tomcat.util.threads.TaskQueue;

/**
 * Tomcat's worker queue with one change: a task goes to the worker that went idle last, not to the
 * one idle longest.
 *
 * Tomcat's TaskQueue is a LinkedBlockingQueue, whose waiting threads are woken first-in first-out,
 * so each request ran on the coldest of the dozen or so idle workers, whose stack and thread-local
 * state had long left the CPU caches. Handing it to the most recently parked worker keeps two or
 * three hot workers doing the work; that alone cut the CPU per /reviews request by about 10% at
 * 800 requests/s over 10 connections (README, "Performance notes").
 *
 * Everything else is TaskQueue's: tasks are still stored in its LinkedBlockingQueue, in order; its
 * offer still decides between queueing and starting a new worker (up to maxThreads, then queueing
 * without bound), and its poll still retires workers after a context reload. Only the waiting moved:
 * an idle worker parks on a stack of its own, and each queued task unparks the top of that stack.
 */
final class LifoTaskQueue extends TaskQueue {

    private static final long serialVersionUID = 1L;

    /** Workers parked waiting for a task, most recently parked first. */
    private final transient ConcurrentLinkedDeque<Thread> idle = new ConcurrentLinkedDeque<>();

    LifoTaskQueue(int capacity) {
        super(capacity);
    }

    @Override
    public boolean offer(Runnable task) {
        // TaskQueue's policy: false asks the executor to start a worker for the task instead.
        boolean queued = super.offer(task);
        if (queued) {
            wakeLatest();
        }
        return queued;
    }

    @Override
    public boolean force(Runnable task) {
        boolean queued = super.force(task);
        if (queued) {
            wakeLatest();
        }
        return queued;
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        return await(System.nanoTime() + unit.toNanos(timeout), true);
    }

    @Override
    public Runnable take() throws InterruptedException {
        return await(0, false);
    }

    private void wakeLatest() {
        Thread worker = idle.pollFirst();
        if (worker != null) {
            LockSupport.unpark(worker);
        }
    }

    /**
     * Waits for a task until the deadline (when timed). A worker goes on the stack before its last
     * look at the queue, so a task queued after that look finds it there and wakes it: no task waits
     * while a worker sleeps. A wake-up that finds the task already taken by a worker that came back
     * from its request just waits again.
     */
    private Runnable await(long deadline, boolean timed) throws InterruptedException {
        Thread self = Thread.currentThread();
        while (true) {
            Runnable task = pollNow();
            if (task != null) {
                return task;
            }
            long left = timed ? deadline - System.nanoTime() : 0;
            if (timed && left <= 0) {
                return null;
            }
            idle.addFirst(self);
            try {
                task = pollNow();
                if (task != null) {
                    return task;
                }
                if (timed) {
                    LockSupport.parkNanos(this, left);
                } else {
                    LockSupport.park(this);
                }
            } finally {
                // Usually a waker took us off the stack already; not after a timeout, an interrupt,
                // a spurious return or a task found on the last look.
                idle.remove(self);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    /**
     * A task if one is queued, without waiting. Through TaskQueue's poll so that, finding none, a
     * worker due for renewal after a context reload is retired as Tomcat would retire it.
     */
    private Runnable pollNow() throws InterruptedException {
        return super.poll(0, TimeUnit.NANOSECONDS);
    }
}
