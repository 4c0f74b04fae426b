package bookinfo.reviews;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.HttpComponentsClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * The client for ratings: Spring's RestClient over Apache HttpClient 5, configured only through
 * HttpClient's builders. Every outbound knob is here.
 */
@Configuration(proxyBeanMethods = false)
class RatingsHttpClient {

    /**
     * More pooled connections than Jetty has request threads (server.jetty.threads.max, 400), so
     * every request waiting on ratings can hold one.
     */
    static final int MAX_CONNECTIONS = 1024;

    /**
     * Idle pooled connections are closed after this; ratings (and mesh proxies) keep theirs 60 s.
     */
    static final TimeValue MAX_IDLE = TimeValue.ofSeconds(30);

    static SocketConfig socketConfig(ReviewsConfig config) {
        return SocketConfig.custom()
                .setTcpNoDelay(config.httpNoDelay())
                .setSoTimeout(Timeout.of(config.ratingsTimeout()))
                .build();
    }

    static PoolingHttpClientConnectionManager connectionManager(ReviewsConfig config) {
        Timeout timeout = Timeout.of(config.ratingsTimeout());
        return PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(MAX_CONNECTIONS)
                .setMaxConnPerRoute(MAX_CONNECTIONS)
                .setDefaultSocketConfig(socketConfig(config))
                .setDefaultConnectionConfig(
                        ConnectionConfig.custom()
                                .setConnectTimeout(timeout)
                                .setSocketTimeout(timeout)
                                .build())
                .build();
    }

    @Bean(destroyMethod = "close")
    CloseableHttpClient ratingsApacheClient(ReviewsConfig config) {
        Timeout timeout = Timeout.of(config.ratingsTimeout());
        return HttpClients.custom()
                .setConnectionManager(connectionManager(config))
                .setDefaultRequestConfig(
                        RequestConfig.custom()
                                // 10 s for black stars, 2.5 s otherwise: waiting for a pooled
                                // connection and
                                // for the response (connecting and reading are bounded in
                                // ConnectionConfig).
                                .setConnectionRequestTimeout(timeout)
                                .setResponseTimeout(timeout)
                                .build())
                .setConnectionReuseStrategy(
                        new RetiringReuseStrategy(
                                config.upstreamKeepAlive(),
                                config.upstreamMaxRequestsPerConnection()))
                .setRetryStrategy(new StaleConnectionRetry())
                .evictIdleConnections(MAX_IDLE)
                .evictExpiredConnections()
                // A ratings call needs none of these, and each would change what is sent.
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableContentCompression()
                .build();
    }

    @Bean
    RestClient ratingsRestClient(
            RestClient.Builder builder,
            CloseableHttpClient ratingsApacheClient,
            ReviewsConfig config) {
        builder.requestFactory(new HttpComponentsClientHttpRequestFactory(ratingsApacheClient))
                .baseUrl(config.ratingsBaseUrl());
        if (!config.upstreamKeepAlive()) {
            // With UPSTREAM_KEEPALIVE=false the reuse strategy never keeps a connection; say so.
            builder.defaultHeader(HttpHeaders.CONNECTION, "close");
        }
        return builder.build();
    }
}
