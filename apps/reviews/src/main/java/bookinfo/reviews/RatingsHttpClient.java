package bookinfo.reviews;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.util.Arrays;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ConnectionReuseStrategy;
import org.apache.hc.core5.http.EndpointDetails;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.impl.DefaultConnectionReuseStrategy;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http.protocol.HttpCoreContext;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.HttpComponentsClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * The client for ratings: Spring's RestClient over Apache HttpClient 5, configured only through
 * HttpClient's builders. Every outbound knob is here (DESIGN.md, "How each knob is implemented").
 */
@Configuration(proxyBeanMethods = false)
class RatingsHttpClient {

    /** More than Jetty's 400 request threads, so every request waiting on ratings can hold one. */
    static final int MAX_CONNECTIONS = 1024;

    /**
     * The ratings wait's stamps on this thread, where classic HttpClient runs it: [0] the first
     * attempt's protocol stage (before the connection's lease), [1] the answer's head parsed.
     */
    private static final ThreadLocal<long[]> WIRE = ThreadLocal.withInitial(() -> new long[2]);

    static long[] newWait() {
        long[] wire = WIRE.get();
        Arrays.fill(wire, 0);
        return wire;
    }

    private static void sent() {
        long[] wire = WIRE.get();
        wire[0] = wire[0] != 0 ? wire[0] : System.nanoTime(); // the first attempt's: retries count
    }

    static SocketConfig socketConfig(ReviewsConfig config) {
        return SocketConfig.custom()
                .setTcpNoDelay(config.httpNoDelay())
                .setSoTimeout(Timeout.of(config.ratingsTimeout()))
                .build();
    }

    /** The UPSTREAM_* knobs (DESIGN.md, "How each knob is implemented"). */
    static ConnectionReuseStrategy reuse(ReviewsConfig config) {
        return (request, response, context) -> {
            EndpointDetails endpoint = HttpCoreContext.cast(context).getEndpointDetails();
            return config.upstreamKeepAlive()
                    && (endpoint == null
                            || endpoint.getRequestCount()
                                    < config.upstreamMaxRequestsPerConnection())
                    && DefaultConnectionReuseStrategy.INSTANCE.keepAlive(
                            request, response, context);
        };
    }

    /** One immediate retry on a pooled connection the peer closed; DESIGN.md's knobs say why. */
    static final class StaleConnectionRetry implements HttpRequestRetryStrategy {

        @Override
        public boolean retryRequest(
                HttpRequest request, IOException exception, int execCount, HttpContext context) {
            return execCount <= 1
                    && (exception instanceof NoHttpResponseException
                            || exception instanceof SocketException
                                    && !(exception instanceof ConnectException));
        }

        @Override
        public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
            return false;
        }

        @Override
        public TimeValue getRetryInterval(
                HttpResponse response, int execCount, HttpContext context) {
            return TimeValue.ZERO_MILLISECONDS;
        }
    }

    @Bean(destroyMethod = "close")
    CloseableHttpClient ratingsApacheClient(ReviewsConfig config) {
        Timeout timeout = Timeout.of(config.ratingsTimeout());
        return HttpClients.custom()
                .setConnectionManager(
                        PoolingHttpClientConnectionManagerBuilder.create()
                                .setMaxConnTotal(MAX_CONNECTIONS)
                                .setMaxConnPerRoute(MAX_CONNECTIONS)
                                .setDefaultSocketConfig(socketConfig(config))
                                .setDefaultConnectionConfig(
                                        ConnectionConfig.custom()
                                                .setConnectTimeout(timeout)
                                                .setSocketTimeout(timeout)
                                                .build())
                                .build())
                .setDefaultRequestConfig(
                        RequestConfig.custom()
                                .setConnectionRequestTimeout(timeout)
                                .setResponseTimeout(timeout)
                                .build())
                .setConnectionReuseStrategy(reuse(config))
                .addRequestInterceptorLast((request, entity, context) -> sent())
                .addResponseInterceptorFirst(
                        (response, entity, context) -> WIRE.get()[1] = System.nanoTime())
                .setRetryStrategy(new StaleConnectionRetry())
                // ratings keeps idle connections 60 s
                .evictIdleConnections(TimeValue.ofSeconds(30))
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
            builder.defaultHeader(HttpHeaders.CONNECTION, "close");
        }
        return builder.build();
    }
}
