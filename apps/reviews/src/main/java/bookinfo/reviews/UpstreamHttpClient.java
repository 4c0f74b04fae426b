package bookinfo.reviews;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.hc.client5.http.ConnectionKeepAliveStrategy;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.DefaultConnectionKeepAliveStrategy;
import org.apache.hc.client5.http.impl.DefaultSchemePortResolver;
import org.apache.hc.client5.http.impl.IdleConnectionEvictor;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.io.ConnectionEndpoint;
import org.apache.hc.client5.http.io.LeaseRequest;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.protocol.RequestClientConnControl;
import org.apache.hc.client5.http.protocol.RequestExpectContinue;
import org.apache.hc.client5.http.protocol.RequestUpgrade;
import org.apache.hc.client5.http.routing.RoutingSupport;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.ConnectionReuseStrategy;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.protocol.DefaultHttpProcessor;
import org.apache.hc.core5.http.protocol.HttpProcessor;
import org.apache.hc.core5.http.protocol.RequestContent;
import org.apache.hc.core5.http.protocol.RequestTargetHost;
import org.apache.hc.core5.http.protocol.RequestUserAgent;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.apache.hc.core5.util.VersionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pooled HTTP/1.1 client for calls to ratings, built from the outbound knobs.
 *
 * It drives Apache HttpClient 5's connection pool (PoolingHttpClientConnectionManager) directly,
 * one exchange per call: lease a connection, send, read the whole answer, give the connection back
 * (or close it). HttpClient's own classic facade did the same through an execution chain built for
 * redirects, proxies, authentication and cookies, none of which a call to ratings uses; its per-call
 * URI parsing, auth-scope path normalisation, exchange-id formatting and chain set-up were about a
 * tenth of the JFR CPU samples of a /reviews request. What stays is what that chain did for us:
 *
 * - the same request interceptors, in the same order, so the bytes sent are unchanged (Host,
 *   "Connection: keep-alive", and HttpClient's User-Agent when the caller forwarded none);
 * - reuse decided by RetiringReuseStrategy, kept for the server's Keep-Alive timeout
 *   (DefaultConnectionKeepAliveStrategy), a connection not reused closed at once;
 * - StaleConnectionRetry, asked about an I/O failure before the response head arrived (as
 *   HttpClient's retry step is), never about one while reading the body;
 * - the timeouts: waiting for a pooled connection, connecting, and every read;
 * - the idle-connection evictor.
 */
final class UpstreamHttpClient implements Closeable {

    private static final Logger log = LoggerFactory.getLogger(UpstreamHttpClient.class);

    /** At least as many as the inbound concurrency the service is sized for (400 connections). */
    static final int MAX_CONNECTIONS = 1024;

    /** Well under the 60 s keep-alive timeout peers use, so we never reuse a connection being closed. */
    static final TimeValue IDLE_EVICTION = TimeValue.ofSeconds(30);

    /** The pool wants an id per lease for its debug log; nothing else reads it. */
    private static final String EXCHANGE = "ratings-call";

    /** A call's outcome: the status and the whole body (null when the response has none). */
    record Answer(int status, byte[] body) {
    }

    private final PoolingHttpClientConnectionManager pool;
    private final IdleConnectionEvictor evictor;
    private final HttpProcessor interceptors;
    private final HttpRequestExecutor exchange = new HttpRequestExecutor();
    private final ConnectionReuseStrategy reuse;
    private final ConnectionKeepAliveStrategy keepAlive = DefaultConnectionKeepAliveStrategy.INSTANCE;
    private final HttpRequestRetryStrategy retry = new StaleConnectionRetry();
    private final RequestConfig requestConfig;
    private final Timeout timeout;

    private UpstreamHttpClient(ReviewsConfig config) {
        timeout = timeout(config);
        pool = PoolingHttpClientConnectionManagerBuilder.create()
                .setDefaultSocketConfig(socketConfig(config))
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(timeout)
                        .setSocketTimeout(timeout)
                        // A stale check costs a 1 ms read on every reuse after idling; the retry on a
                        // closed connection and the idle eviction below cover the same case for free.
                        .setValidateAfterInactivity(TimeValue.NEG_ONE_MILLISECOND)
                        .build())
                .setMaxConnTotal(MAX_CONNECTIONS)
                .setMaxConnPerRoute(MAX_CONNECTIONS)
                .build();
        // HttpClientBuilder's default request interceptors, in its order, less the two that never act
        // here (TRACE validation, default headers: none are set). No cookie store, redirects or auth
        // cache exist here at all: each call carries exactly the forwarded headers.
        interceptors = new DefaultHttpProcessor(
                new RequestTargetHost(),
                new RequestContent(),
                new RequestClientConnControl(),
                new RequestUserAgent(VersionInfo.getSoftwareInfo(
                        "Apache-HttpClient", "org.apache.hc.client5", HttpClientBuilder.class)),
                new RequestExpectContinue(),
                new RequestUpgrade());
        reuse = new RetiringReuseStrategy(config.upstreamKeepAlive(), config.upstreamMaxRequestsPerConnection());
        requestConfig = RequestConfig.custom()
                .setConnectionRequestTimeout(timeout)
                .setResponseTimeout(timeout)
                .build();
        evictor = new IdleConnectionEvictor(pool, IDLE_EVICTION, IDLE_EVICTION);
        evictor.start();
    }

    static SocketConfig socketConfig(ReviewsConfig config) {
        return SocketConfig.custom()
                .setTcpNoDelay(config.httpNoDelay())
                .setSoTimeout(timeout(config))
                .build();
    }

    static UpstreamHttpClient build(ReviewsConfig config) {
        return new UpstreamHttpClient(config);
    }

    /** The route to target (an http host with its port); compute it once per peer. */
    static HttpRoute route(HttpHost target) {
        return new HttpRoute(RoutingSupport.normalize(target, DefaultSchemePortResolver.INSTANCE));
    }

    /**
     * Sends request (which names its target) over a pooled connection on route and reads the whole
     * answer. Failures are exceptions: I/O, timeouts, protocol errors.
     */
    Answer execute(HttpRoute route, ClassicHttpRequest request) throws IOException, HttpException {
        for (int attempt = 1; ; attempt++) {
            HttpClientContext context = HttpClientContext.create();
            context.setRequestConfig(requestConfig);
            context.setRoute(route);
            ConnectionEndpoint endpoint = lease(route);
            ClassicHttpResponse response;
            try {
                // The read timeout needs no setting here: the pool applies ConnectionConfig's socket
                // timeout (the same value) when it connects or leases a connection.
                if (!endpoint.isConnected()) {
                    pool.connect(endpoint, null, context);
                }
                interceptors.process(request, request.getEntity(), context);
                response = endpoint.execute(EXCHANGE, request, exchange, context);
            } catch (IOException | HttpException | RuntimeException e) {
                discard(endpoint);
                if (e instanceof IOException io && retry.retryRequest(request, io, attempt, context)) {
                    log.debug("ratings connection failed before an answer ({}), retrying once", io.toString());
                    continue;
                }
                throw e;
            }
            return read(endpoint, request, response, context);
        }
    }

    private ConnectionEndpoint lease(HttpRoute route) throws IOException {
        LeaseRequest lease = pool.lease(EXCHANGE, route, timeout, null);
        try {
            return lease.get(timeout);
        } catch (TimeoutException e) {
            lease.cancel();
            throw new ConnectionRequestTimeoutException(e.getMessage());
        } catch (InterruptedException e) {
            lease.cancel();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a connection to ratings");
        } catch (ExecutionException e) {
            lease.cancel();
            throw new IOException("no connection to ratings", e.getCause() != null ? e.getCause() : e);
        }
    }

    /** Reads the body to its end, then returns the connection to the pool or closes it. */
    private Answer read(ConnectionEndpoint endpoint, ClassicHttpRequest request, ClassicHttpResponse response,
            HttpClientContext context) throws IOException {
        boolean reusable = false;
        TimeValue keepFor = null;
        try {
            if (reuse.keepAlive(request, response, context)) {
                reusable = true;
                keepFor = keepAlive.getKeepAliveDuration(response, context);
            }
            HttpEntity entity = response.getEntity();
            byte[] body = entity == null ? null : EntityUtils.toByteArray(entity);
            return new Answer(response.getCode(), body);
        } catch (IOException | RuntimeException e) {
            reusable = false;
            throw e;
        } finally {
            if (reusable) {
                pool.release(endpoint, null, keepFor);
            } else {
                discard(endpoint);
            }
        }
    }

    /** A connection that is not reused is closed at once (no lingering), as HttpClient's runtime does. */
    private void discard(ConnectionEndpoint endpoint) {
        try {
            endpoint.close(CloseMode.IMMEDIATE);
        } finally {
            pool.release(endpoint, null, TimeValue.ZERO_MILLISECONDS);
        }
    }

    @Override
    public void close() {
        evictor.shutdown();
        try {
            evictor.awaitTermination(Timeout.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        pool.close(CloseMode.GRACEFUL);
    }

    private static Timeout timeout(ReviewsConfig config) {
        return Timeout.ofMilliseconds(config.ratingsTimeout().toMillis());
    }
}
