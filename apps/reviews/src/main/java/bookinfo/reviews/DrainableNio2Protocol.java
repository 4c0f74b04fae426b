package bookinfo.reviews;

import java.util.concurrent.locks.Lock;
import org.apache.coyote.http11.Http11Nio2Protocol;
import org.apache.tomcat.util.net.Nio2Channel;
import org.apache.tomcat.util.net.SocketWrapperBase;

/**
 * Tomcat's NIO2 HTTP/1.1 protocol plus the one drain step Tomcat lacks: closing the connections that
 * sit idle between requests. Without it they stay open until the connector stops, and a request a
 * client sends on one meanwhile is dropped unanswered by the paused connector.
 *
 * NIO2 rather than Tomcat's default NIO connector: NIO parks each kept-alive connection with its
 * poller thread between requests, which costs the worker a wake-up of the poller and the poller two
 * epoll_ctl calls and an extra epoll_wait per request. NIO2 re-arms a one-shot read instead, which
 * took 4 of the 16 system calls and 1 of the 5 context switches out of each /reviews request and
 * 10-15% of its CPU (README, "Performance notes").
 */
public class DrainableNio2Protocol extends Http11Nio2Protocol {

    /** Tomcat creates the protocol by class name; its workers come from LifoNio2Endpoint. */
    public DrainableNio2Protocol() {
        super(new LifoNio2Endpoint());
    }

    /** Stops accepting; responses still in progress then carry "Connection: close". Idempotent. */
    void stopAccepting() {
        closeServerSocketGraceful();
    }

    /**
     * Closes every connection that has no request in progress; returns how many. Tomcat processes a
     * connection while holding its lock, so a lock we can take marks an idle connection, and holding
     * it while closing keeps a worker from starting on that connection meanwhile.
     */
    int closeIdleConnections() {
        int closed = 0;
        for (SocketWrapperBase<Nio2Channel> connection : getEndpoint().getConnections()) {
            Lock lock = connection.getLock();
            if (lock.tryLock()) {
                try {
                    if (!connection.isClosed()) {
                        connection.close();
                        closed++;
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
        return closed;
    }
}
