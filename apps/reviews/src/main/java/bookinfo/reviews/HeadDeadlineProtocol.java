package bookinfo.reviews;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.apache.coyote.Constants;
import org.apache.coyote.Processor;
import org.apache.coyote.Request;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.tomcat.util.net.NioChannel;
import org.apache.tomcat.util.net.NioEndpoint;
import org.apache.tomcat.util.net.SocketEvent;
import org.apache.tomcat.util.net.SocketWrapperBase;

/**
 * Tomcat's NIO HTTP/1.1 protocol handler plus an overall deadline for reading a request head
 * (HTTP_HEADER_TIMEOUT_SECONDS). Installed as the connector's protocol class (TomcatKnobs), the
 * documented way to plug a protocol handler into a Tomcat connector.
 *
 * <p>Why: Tomcat's connectionTimeout bounds each read, not the head. A client sending one byte
 * every 9 s of a 8 KiB head stays within a 10 s connectionTimeout for 20 hours; the issue measured
 * 10 of 10 slow heads still open after 130 s. Tomcat has no setting for the whole head.
 *
 * <p>How: every 250 ms a task on Tomcat's utility executor (the one Tomcat's own async-timeout
 * monitor uses) walks the endpoint's open connections (public AbstractEndpoint.getConnections(),
 * reached through the protected getEndpoint() every protocol subclass has). For each it works out
 * the deadline that applies:
 *
 * <ul>
 *   <li>no head completed yet on the connection: the time it was first seen (its accept, at most
 *       one sweep late) plus the timeout, whatever it sends meanwhile (blank lines included);
 *   <li>a later head under way (Tomcat's processor holds a request whose start time, the head's
 *       first byte, is set, and which has not reached the service stage): that start time plus the
 *       timeout;
 *   <li>idle between requests: the last response plus the keep-alive timeout plus the timeout
 *       (Tomcat's keep-alive timeout closes an idle connection first; this only catches a client
 *       that keeps resetting Tomcat's read timeout with blank lines, which are not a request).
 * </ul>
 *
 * A connection past its deadline is closed the way Tomcat's poller closes one whose read timeout
 * has passed: an ERROR event dispatched for it (SocketWrapperBase.processSocket), which a Tomcat
 * worker handles under the connection's lock, so it never runs beside another event for the same
 * connection; Tomcat's connection handler answers ERROR by closing. (Shortening the read timeout
 * and leaving the close to the poller does not work: the poller checks timeouts only when it wakes,
 * and while bytes keep trickling in it wakes right after each read, when no timeout has passed.)
 * The sweep looks at a connection only while holding its lock (tryLock; a connection a worker is on
 * is looked at in a later sweep), so a request being served is never touched, however long it
 * takes. A request whose head completes just as its deadline passes is served first, then the
 * connection is closed.
 */
public class HeadDeadlineProtocol extends Http11NioProtocol {

    static final long SWEEP_MILLIS = 250;
    private static final long RESEND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private volatile long headTimeoutMillis = 10_000;
    private ScheduledFuture<?> sweeper;

    /** Only the sweeper task touches this (scheduleWithFixedDelay runs one sweep at a time). */
    private Map<SocketWrapperBase<NioChannel>, Track> tracks = new HashMap<>();

    /** What the sweeper remembers about one connection between sweeps. */
    private static final class Track {
        final long firstSeen;
        long lastWrite;
        long lastActive;
        boolean headDone;
        long closeSent = -1;

        Track(long now, long lastWrite, boolean headDone) {
            this.firstSeen = now;
            this.lastActive = now;
            this.lastWrite = lastWrite;
            this.headDone = headDone;
        }
    }

    public long getHeadTimeoutMillis() {
        return headTimeoutMillis;
    }

    public void setHeadTimeoutMillis(long headTimeoutMillis) {
        this.headTimeoutMillis = headTimeoutMillis;
    }

    @Override
    public void start() throws Exception {
        super.start();
        sweeper =
                getUtilityExecutor()
                        .scheduleWithFixedDelay(
                                this::sweepQuietly,
                                SWEEP_MILLIS,
                                SWEEP_MILLIS,
                                TimeUnit.MILLISECONDS);
    }

    @Override
    public void stop() throws Exception {
        cancelSweeper();
        super.stop();
    }

    @Override
    public void destroy() throws Exception {
        cancelSweeper();
        super.destroy();
    }

    private void cancelSweeper() {
        ScheduledFuture<?> s = sweeper;
        if (s != null) {
            s.cancel(false);
            sweeper = null;
        }
    }

    private void sweepQuietly() {
        try {
            sweep(System.nanoTime());
        } catch (RuntimeException e) {
            // A connection closing under the sweep; the next sweep sees the new state. An exception
            // escaping would cancel the scheduled task for good.
            getLog().debug("head deadline sweep failed", e);
        }
    }

    void sweep(long now) {
        long timeout = TimeUnit.MILLISECONDS.toNanos(headTimeoutMillis);
        int keepAliveTimeout = getKeepAliveTimeout();
        long idle = TimeUnit.MILLISECONDS.toNanos(Math.max(keepAliveTimeout, 0)) + timeout;
        boolean keepAliveTellsApart = keepAliveTimeout != getConnectionTimeout();
        Map<SocketWrapperBase<NioChannel>, Track> seen = new HashMap<>();
        for (SocketWrapperBase<NioChannel> connection : getEndpoint().getConnections()) {
            if (connection.isClosed()) {
                continue;
            }
            Track track = tracks.get(connection);
            if (track == null) {
                // A connection that completed a request before this first sight waits for the next
                // one
                // with Tomcat's keep-alive timeout as its read timeout; a new one has
                // connectionTimeout.
                // When the two are equal, treating a served connection as new is harmless: Tomcat's
                // keep-alive timeout, counted from its last response (before this sweep), closes it
                // no later than this deadline would.
                boolean served =
                        keepAliveTellsApart && connection.getReadTimeout() == keepAliveTimeout;
                track = new Track(now, lastWrite(connection), served);
            }
            seen.put(connection, track);
            // Tomcat's workers hold this lock while they handle an event for the connection:
            // parsing
            // bytes that just came, or serving a request, however long that takes. Taking it here
            // means the state read below is not changing underneath, and a connection being served
            // is left alone (its response, once written, marks its head as done).
            Lock lock = connection.getLock();
            if (!lock.tryLock()) {
                continue;
            }
            try {
                OptionalLong deadline = deadline(connection, track, now, timeout, idle);
                if (deadline.isPresent()
                        && now - deadline.getAsLong() > 0
                        && (track.closeSent == -1 || now - track.closeSent > RESEND_NANOS)) {
                    // Once; again only if it is somehow still open a second later (a busy
                    // executor).
                    // The event's worker waits for this lock, so it runs after this sweep lets go.
                    track.closeSent = now;
                    connection.processSocket(SocketEvent.ERROR, true);
                }
            } finally {
                lock.unlock();
            }
        }
        tracks = seen;
    }

    /** Empty while a request is being served: its time is the application's, not the head's. */
    private static OptionalLong deadline(
            SocketWrapperBase<NioChannel> connection,
            Track track,
            long now,
            long timeout,
            long idle) {
        // Under the connection's lock no worker holds its processor: one parked on the connection
        // (Tomcat's "long" state) is waiting for the rest of a head, or for an asynchronous
        // request.
        long headStart = -1;
        if (connection.getCurrentProcessor() instanceof Processor processor) {
            Request request = processor.getRequest();
            int stage = request.getRequestProcessor().getStage();
            if (stage >= Constants.STAGE_PREPARE && stage <= Constants.STAGE_ENDOUTPUT) {
                // The head is complete and the request is being served: no deadline of ours.
                track.headDone = true;
                track.lastActive = now;
                return OptionalLong.empty();
            }
            headStart = request.getStartTimeNanos();
        }
        long lastWrite = lastWrite(connection);
        if (lastWrite != track.lastWrite) {
            // Something was written since the last sweep: a response, so a head was complete.
            track.lastWrite = lastWrite;
            track.headDone = true;
            track.lastActive = now;
        }
        if (!track.headDone) {
            return OptionalLong.of(track.firstSeen + timeout);
        }
        if (headStart != -1) {
            return OptionalLong.of(headStart + timeout);
        }
        return OptionalLong.of(track.lastActive + idle);
    }

    private static long lastWrite(SocketWrapperBase<NioChannel> connection) {
        return connection instanceof NioEndpoint.NioSocketWrapper nio ? nio.getLastWrite() : 0;
    }
}
