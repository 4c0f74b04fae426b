package bookinfo.reviews;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.AbstractLifeCycle;

/**
 * An overall deadline for reading a request head (HTTP_HEADER_TIMEOUT_SECONDS), on Jetty's public
 * extension points: a connection listener (every connection the connector opens and closes), a
 * handler wrapper in front of the application (a head is complete once Jetty hands the request to a
 * handler), and a sweep every 250 ms.
 *
 * <p>Why: Jetty's idle timeout bounds the pause between two reads, not the head. A client sending
 * one byte every 9 s of an 8 KiB head stays within a 10 s idle timeout for 20 hours. Jetty has no
 * setting for the whole head.
 *
 * <p>The deadline that applies to a connection not serving a request:
 *
 * <ul>
 *   <li>no head completed yet: its accept plus the timeout, whatever it sends meanwhile;
 *   <li>after a response: none while nothing arrives (Jetty's idle timeout, the keep-alive timeout,
 *       closes an idle connection); the first new bytes start the clock (seen at most one sweep
 *       late), and the head must be complete the timeout after that.
 * </ul>
 *
 * A connection past its deadline is closed without an answer (its end point closed: Jetty's own way
 * of ending a connection whose idle timeout expired). A connection serving a request is never
 * touched, however long the request takes; while it does, the idle timeout is the head timeout (the
 * longest pause between two reads of a body or two writes), and the keep-alive timeout again once
 * the response is complete.
 */
final class HeadDeadline extends AbstractLifeCycle implements Connection.Listener {

    static final long SWEEP_MILLIS = 250;

    private final long headNanos;
    private final long headMillis;
    private final long keepAliveMillis;
    private final Map<Connection, Track> tracks = new ConcurrentHashMap<>();
    private ScheduledExecutorService sweeper;

    /** One connection's state: written by Jetty's threads and the sweeper. */
    private static final class Track {
        volatile boolean serving;

        /** When the head now being read started (System.nanoTime), or IDLE. */
        volatile long headStart;

        /** Bytes the connection had read when its last response was complete. */
        volatile long bytesAtIdle;

        Track(long now) {
            headStart = now;
        }
    }

    private static final long IDLE = Long.MIN_VALUE;

    HeadDeadline(long headMillis, long keepAliveMillis) {
        this.headMillis = headMillis;
        this.headNanos = TimeUnit.MILLISECONDS.toNanos(headMillis);
        this.keepAliveMillis = keepAliveMillis;
    }

    /**
     * Puts the deadline on every connector of the server (listener beans a connector holds are
     * added to each connection it makes) and in front of the server's handler; started and stopped
     * with the server.
     */
    static void install(Server server, long headMillis, long keepAliveMillis) {
        HeadDeadline deadline = new HeadDeadline(headMillis, keepAliveMillis);
        for (Connector connector : server.getConnectors()) {
            connector.addBean(deadline, false);
        }
        server.addBean(deadline, true);
        Handler.Wrapper marker = deadline.new HeadComplete();
        marker.setHandler(server.getHandler());
        server.setHandler(marker);
    }

    @Override
    protected void doStart() {
        sweeper =
                Executors.newSingleThreadScheduledExecutor(
                        r -> {
                            Thread t = new Thread(r, "reviews-head-deadline");
                            t.setDaemon(true);
                            return t;
                        });
        sweeper.scheduleWithFixedDelay(
                this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void doStop() {
        sweeper.shutdownNow();
    }

    @Override
    public void onOpened(Connection connection) {
        tracks.put(connection, new Track(System.nanoTime()));
    }

    @Override
    public void onClosed(Connection connection) {
        tracks.remove(connection);
    }

    long headMillis() {
        return headMillis;
    }

    /** Connections being tracked (open and not yet closed); for tests. */
    int tracked() {
        return tracks.size();
    }

    void sweep() {
        long now = System.nanoTime();
        tracks.forEach(
                (connection, track) -> {
                    if (track.serving) {
                        return;
                    }
                    long start = track.headStart;
                    if (start == IDLE) {
                        if (connection.getBytesIn() > track.bytesAtIdle) {
                            track.headStart = now;
                        }
                        return;
                    }
                    // Read again: a head completed while the sweep looked is served.
                    if (now - start >= headNanos && !track.serving) {
                        connection.getEndPoint().close();
                    }
                });
    }

    /** In front of the application: a request reaching it has a complete head. */
    private final class HeadComplete extends Handler.Wrapper {

        @Override
        public boolean handle(Request request, Response response, Callback callback)
                throws Exception {
            Connection connection = request.getConnectionMetaData().getConnection();
            Track track = tracks.get(connection);
            if (track == null) {
                return super.handle(request, response, callback);
            }
            EndPoint endPoint = connection.getEndPoint();
            track.serving = true;
            endPoint.setIdleTimeout(headMillis);
            Callback done =
                    new Callback.Nested(callback) {
                        @Override
                        public void succeeded() {
                            idle();
                            super.succeeded();
                        }

                        @Override
                        public void failed(Throwable failure) {
                            idle();
                            super.failed(failure);
                        }

                        /**
                         * Before Jetty hears of the end: it may go on to a pipelined request at
                         * once, on this thread.
                         */
                        private void idle() {
                            track.bytesAtIdle = connection.getBytesIn();
                            track.headStart = IDLE;
                            endPoint.setIdleTimeout(keepAliveMillis);
                            track.serving = false;
                        }
                    };
            if (super.handle(request, response, done)) {
                return true;
            }
            track.serving = false;
            return false;
        }
    }
}
