package bookinfo.reviews;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/** The pooled HTTP/1.1 client for calls to ratings, built from the outbound knobs. */
final class UpstreamHttpClient {

    /** At least as many as the inbound concurrency the service is sized for (400 connections). */
    static final int MAX_CONNECTIONS = 1024;

    /** Well under the 60 s keep-alive timeout peers use, so we never reuse a connection being closed. */
    static final TimeValue IDLE_EVICTION = TimeValue.ofSeconds(30);

    private UpstreamHttpClient() {
    }

    static SocketConfig socketConfig(ReviewsConfig config) {
        return SocketConfig.custom()
                .setTcpNoDelay(config.httpNoDelay())
                .setSoTimeout(timeout(config))
                .build();
    }

    static CloseableHttpClient build(ReviewsConfig config) {
        Timeout timeout = timeout(config);
        PoolingHttpClientConnectionManager pool = PoolingHttpClientConnectionManagerBuilder.create()
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
        return HttpClients.custom()
                .setConnectionManager(pool)
                .setConnectionReuseStrategy(new RetiringReuseStrategy(
                        config.upstreamKeepAlive(), config.upstreamMaxRequestsPerConnection()))
                .setRetryStrategy(new StaleConnectionRetry())
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(timeout)
                        .setResponseTimeout(timeout)
                        .build())
                .evictIdleConnections(IDLE_EVICTION)
                .evictExpiredConnections()
                // Cookies are per end user and arrive with each request; nothing may be remembered.
                .disableCookieManagement()
                .disableContentCompression()
                .disableRedirectHandling()
                .disableAuthCaching()
                .build();
    }

    private static Timeout timeout(ReviewsConfig config) {
        return Timeout.ofMilliseconds(config.ratingsTimeout().toMillis());
    }
}
