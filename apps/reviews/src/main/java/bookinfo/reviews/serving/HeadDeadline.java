package bookinfo.reviews.serving;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.AbstractLifeCycle;

/**
 * An overall deadline for a request head (HTTP_HEADER_TIMEOUT_SECONDS), which Jetty's idle timeout
 * (a bound on each pause) does not give (DESIGN.md, "Deviations from the ordinary path").
 */
final class HeadDeadline extends AbstractLifeCycle implements Connection.Listener {

    static final long SWEEP_MILLIS = 250;

    private final long headNanos;
    private final long headMillis;
    private final long keepAliveMillis;
    private final Map<Connection, Track> tracks = new ConcurrentHashMap<>();
    private ScheduledExecutorService sweeper;

    /** One connection's state, written by Jetty's threads and the sweeper. */
    private static final class Track {
        volatile boolean serving;
        volatile long headStart; // System.nanoTime, or IDLE
        volatile long bytesAtIdle; // bytes read when the last response was complete

        Track(long now) {
            headStart = now;
        }
    }

    private static final long IDLE = Long.MIN_VALUE;

    private static final byte[] TIMEOUT = timeout();

    private static byte[] timeout() {
        byte[] body = JsonErrors.Jetty.body(408);
        String head =
                "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length
                        + "\r\nConnection: close\r\n\r\n";
        return ByteBuffer.allocate(head.length() + body.length)
                .put(head.getBytes(StandardCharsets.US_ASCII))
                .put(body)
                .array();
    }

    HeadDeadline(long headMillis, long keepAliveMillis) {
        this.headMillis = headMillis;
        this.headNanos = TimeUnit.MILLISECONDS.toNanos(headMillis);
        this.keepAliveMillis = keepAliveMillis;
    }

    /** On every connector (to see each connection) and in front of the handler. */
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
                        expire(connection, track);
                    }
                });
    }

    private void expire(Connection connection, Track track) {
        tracks.remove(connection);
        EndPoint endPoint = connection.getEndPoint();
        if (connection.getBytesIn() == track.bytesAtIdle) {
            endPoint.close();
            return;
        }
        Callback close = Callback.from(endPoint::close, failure -> endPoint.close());
        endPoint.write(close, ByteBuffer.wrap(TIMEOUT));
    }

    /** In front of the application: a request reaching it has a complete head. */
    private final class HeadComplete extends Handler.Wrapper {

        @Override
        public boolean handle(Request request, Response response, Callback callback)
                throws Exception {
            Connection connection = request.getConnectionMetaData().getConnection();
            EndPoint endPoint = connection.getEndPoint();
            if (!endPoint.isOpen()) {
                // A pipelined request Jetty read before the connection closed (a client that
                // stopped reading, cut at the idle timeout): no one can receive its answer.
                callback.failed(new EofException("connection closed"));
                return true;
            }
            Track track = tracks.get(connection);
            if (track == null) {
                return super.handle(request, response, callback);
            }
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

                        // Before Jetty hears of the end: it may go on at once to the next request.
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
