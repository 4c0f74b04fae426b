package bookinfo.reviews;

import java.util.concurrent.locks.Lock;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.tomcat.util.net.NioChannel;
import org.apache.tomcat.util.net.SocketWrapperBase;

/**
 * Tomcat's NIO HTTP/1.1 protocol plus the one drain step Tomcat lacks: closing the connections that
 * sit idle between requests. Without it they stay open until the connector stops, and a request a
 * client sends on one meanwhile is dropped unanswered by the paused connector.
 */
public class DrainableNioProtocol extends Http11NioProtocol {

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
        for (SocketWrapperBase<NioChannel> connection : getEndpoint().getConnections()) {
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
