package bookinfo.reviews;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReviewsConfigTest {

    @Test
    void defaultsMatchTheCatalogue() {
        ReviewsConfig c = ReviewsConfig.fromEnv(Map.of("HOSTNAME", "pod-1"));
        assertEquals(9080, c.port());
        assertEquals("0.0.0.0", c.listenAddress());
        assertTrue(c.httpNoDelay());
        assertTrue(c.httpKeepAlive());
        assertEquals(60, c.httpKeepAliveTimeoutSeconds());
        assertEquals(10, c.httpHeaderTimeoutSeconds());
        assertEquals(1024, c.httpMaxConnections());
        assertTrue(c.upstreamKeepAlive());
        assertEquals(100, c.upstreamMaxRequestsPerConnection());
        assertEquals(10, c.shutdownTimeoutSeconds());
        assertFalse(c.accessLog());
        assertTrue(c.serverTiming());
        assertEquals("info", c.logLevel());
        assertFalse(c.enableRatings());
        assertEquals("black", c.starColor());
        assertEquals("null", c.clusterName());
        assertEquals("pod-1", c.podName());
        assertEquals("http://ratings:9080", c.ratingsBaseUrl());
    }

    @Test
    void booleansAreCaseInsensitiveAndIgnoreSurroundingBlanks() {
        ReviewsConfig c =
                ReviewsConfig.fromEnv(
                        Map.of(
                                "HTTP_NODELAY",
                                " FALSE ",
                                "ACCESS_LOG",
                                "True",
                                "ENABLE_RATINGS",
                                "\ttrue\n",
                                "LOG_LEVEL",
                                "WARN"));
        assertFalse(c.httpNoDelay());
        assertTrue(c.accessLog());
        assertTrue(c.enableRatings());
        assertEquals("warn", c.logLevel());
    }

    @Test
    void integersAcceptTheirRangeLimits() {
        ReviewsConfig low =
                ReviewsConfig.fromEnv(
                        Map.of(
                                "PORT",
                                "1",
                                "HTTP_KEEPALIVE_TIMEOUT_SECONDS",
                                "1",
                                "UPSTREAM_MAX_REQUESTS_PER_CONNECTION",
                                "1",
                                "SHUTDOWN_TIMEOUT_SECONDS",
                                "1",
                                "HTTP_HEADER_TIMEOUT_SECONDS",
                                "1",
                                "HTTP_MAX_CONNECTIONS",
                                " 1 "));
        assertEquals(1, low.port());
        assertEquals(1, low.httpHeaderTimeoutSeconds());
        assertEquals(1, low.httpMaxConnections());
        assertEquals(1, low.httpKeepAliveTimeoutSeconds());
        assertEquals(1, low.upstreamMaxRequestsPerConnection());
        ReviewsConfig high =
                ReviewsConfig.fromEnv(
                        Map.of(
                                "PORT",
                                "65535",
                                "HTTP_KEEPALIVE_TIMEOUT_SECONDS",
                                "3600",
                                "UPSTREAM_MAX_REQUESTS_PER_CONNECTION",
                                "1000000",
                                "SHUTDOWN_TIMEOUT_SECONDS",
                                "300",
                                "HTTP_HEADER_TIMEOUT_SECONDS",
                                "300",
                                "HTTP_MAX_CONNECTIONS",
                                "100000"));
        assertEquals(65535, high.port());
        assertEquals(300, high.httpHeaderTimeoutSeconds());
        assertEquals(100_000, high.httpMaxConnections());
        assertEquals(3600, high.httpKeepAliveTimeoutSeconds());
        assertEquals(1_000_000, high.upstreamMaxRequestsPerConnection());
        assertEquals(300, high.shutdownTimeoutSeconds());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "HTTP_NODELAY                         | maybe     | invalid HTTP_NODELAY=\"maybe\": want true or false",
                "HTTP_NODELAY                         | 1         | invalid HTTP_NODELAY=\"1\": want true or false",
                "HTTP_KEEPALIVE                       | yes       | invalid HTTP_KEEPALIVE=\"yes\": want true or false",
                "HTTP_KEEPALIVE                       | ''        | invalid HTTP_KEEPALIVE=\"\": want true or false",
                "UPSTREAM_KEEPALIVE                   | on        | invalid UPSTREAM_KEEPALIVE=\"on\": want true or false",
                "ACCESS_LOG                           | 0         | invalid ACCESS_LOG=\"0\": want true or false",
                "SERVER_TIMING                        | off       | invalid SERVER_TIMING=\"off\": want true or false",
                "ENABLE_RATINGS                       | enabled   | invalid ENABLE_RATINGS=\"enabled\": want true or false",
                "PORT                                 | 0         | invalid PORT=\"0\": want an integer from 1 to 65535",
                "PORT                                 | 65536     | invalid PORT=\"65536\": want an integer from 1 to 65535",
                "PORT                                 | 80a       | invalid PORT=\"80a\": want an integer from 1 to 65535",
                "PORT                                 | -1        | invalid PORT=\"-1\": want an integer from 1 to 65535",
                "PORT                                 | 99999999999 | invalid PORT=\"99999999999\": want an integer from 1 to 65535",
                "HTTP_KEEPALIVE_TIMEOUT_SECONDS       | 0         | invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS=\"0\": want an integer from 1 to 3600",
                "HTTP_KEEPALIVE_TIMEOUT_SECONDS       | 1.5       | invalid HTTP_KEEPALIVE_TIMEOUT_SECONDS=\"1.5\": want an integer from 1 to 3600",
                "UPSTREAM_MAX_REQUESTS_PER_CONNECTION | 1000001   | invalid UPSTREAM_MAX_REQUESTS_PER_CONNECTION=\"1000001\": want an integer from 1 to 1000000",
                "SHUTDOWN_TIMEOUT_SECONDS             | 301       | invalid SHUTDOWN_TIMEOUT_SECONDS=\"301\": want an integer from 1 to 300",
                "HTTP_HEADER_TIMEOUT_SECONDS          | 0         | invalid HTTP_HEADER_TIMEOUT_SECONDS=\"0\": want an integer from 1 to 300",
                "HTTP_HEADER_TIMEOUT_SECONDS          | 301       | invalid HTTP_HEADER_TIMEOUT_SECONDS=\"301\": want an integer from 1 to 300",
                "HTTP_HEADER_TIMEOUT_SECONDS          | 2.5       | invalid HTTP_HEADER_TIMEOUT_SECONDS=\"2.5\": want an integer from 1 to 300",
                "HTTP_MAX_CONNECTIONS                 | 0         | invalid HTTP_MAX_CONNECTIONS=\"0\": want an integer from 1 to 100000",
                "HTTP_MAX_CONNECTIONS                 | 100001    | invalid HTTP_MAX_CONNECTIONS=\"100001\": want an integer from 1 to 100000",
                "HTTP_MAX_CONNECTIONS                 | 1e3       | invalid HTTP_MAX_CONNECTIONS=\"1e3\": want an integer from 1 to 100000",
                "RATINGS_SERVICE_PORT                 | http      | invalid RATINGS_SERVICE_PORT=\"http\": want an integer from 1 to 65535",
                "RATINGS_HOSTNAME                     | ''        | invalid RATINGS_HOSTNAME=\"\": want a host name",
                "LOG_LEVEL                            | verbose   | invalid LOG_LEVEL=\"verbose\": want one of debug, error, info, warn",
                "LISTEN_ADDRESS                       | localhost | invalid LISTEN_ADDRESS=\"localhost\": want an IPv4 or IPv6 address",
            })
    void badValuesNameTheVariableAndTheValue(String variable, String value, String message) {
        ReviewsConfig.BadConfigException e =
                assertThrows(
                        ReviewsConfig.BadConfigException.class,
                        () -> ReviewsConfig.fromEnv(Map.of(variable, value)));
        assertEquals(message, e.getMessage());
    }

    @Test
    void controlCharactersInABadValueStayOnOneLine() {
        ReviewsConfig.BadConfigException e =
                assertThrows(
                        ReviewsConfig.BadConfigException.class,
                        () -> ReviewsConfig.fromEnv(Map.of("HTTP_NODELAY", "tr\nue\"")));
        assertEquals("invalid HTTP_NODELAY=\"tr\\nue\\\"\": want true or false", e.getMessage());
    }

    @Test
    void blackStarsWaitTenSecondsForRatingsAnyOtherColourTwoAndAHalf() {
        assertEquals(Duration.ofSeconds(10), ReviewsConfig.fromEnv(Map.of()).ratingsTimeout());
        assertEquals(
                Duration.ofSeconds(10),
                ReviewsConfig.fromEnv(Map.of("STAR_COLOR", "black")).ratingsTimeout());
        assertEquals(
                Duration.ofMillis(2500),
                ReviewsConfig.fromEnv(Map.of("STAR_COLOR", "red")).ratingsTimeout());
        assertEquals(
                Duration.ofMillis(2500),
                ReviewsConfig.fromEnv(Map.of("STAR_COLOR", "Black")).ratingsTimeout());
    }

    @Test
    void ratingsAddressUsesUpstreamVariableNamesAndTheServicesDomain() {
        ReviewsConfig c =
                ReviewsConfig.fromEnv(
                        Map.of(
                                "RATINGS_HOSTNAME",
                                "ratings-v1",
                                "RATINGS_SERVICE_PORT",
                                "8080",
                                "SERVICES_DOMAIN",
                                "bookinfo.svc.cluster.local",
                                "RATINGS_PORT",
                                "tcp://10.0.0.1:9080"));
        assertEquals("http://ratings-v1.bookinfo.svc.cluster.local:8080", c.ratingsBaseUrl());
        assertEquals(
                "http://[::1]:9080",
                ReviewsConfig.fromEnv(Map.of("RATINGS_HOSTNAME", "::1")).ratingsBaseUrl());
    }

    @Test
    void clusterNameAndPodNameComeFromTheEnvironment() {
        ReviewsConfig c =
                ReviewsConfig.fromEnv(Map.of("CLUSTER_NAME", "east", "HOSTNAME", "reviews-v2-abc"));
        assertEquals("east", c.clusterName());
        assertEquals("reviews-v2-abc", c.podName());
        assertFalse(
                ReviewsConfig.fromEnv(Map.of()).podName().isEmpty(),
                "falls back to the machine's host name");
    }

    @Test
    void listenAddressTakesIpv4AndIpv6Literals() {
        assertEquals(
                "127.0.0.1",
                ReviewsConfig.fromEnv(Map.of("LISTEN_ADDRESS", "127.0.0.1")).listenAddress());
        assertEquals("::1", ReviewsConfig.fromEnv(Map.of("LISTEN_ADDRESS", "::1")).listenAddress());
    }
}
