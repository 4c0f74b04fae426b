package bookinfo.reviews;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * Everything the service reads from its environment, parsed and validated once at start. See
 * docs/configuration.md for the catalogue; the README lists what reviews reads.
 */
public record ReviewsConfig(
        int port,
        String listenAddress,
        boolean httpNoDelay,
        boolean httpKeepAlive,
        int httpKeepAliveTimeoutSeconds,
        int httpHeaderTimeoutSeconds,
        int httpMaxConnections,
        boolean upstreamKeepAlive,
        int upstreamMaxRequestsPerConnection,
        int shutdownTimeoutSeconds,
        boolean accessLog,
        boolean serverTiming,
        String logLevel,
        boolean enableRatings,
        String starColor,
        String clusterName,
        String podName,
        String serviceVersion,
        String ratingsBaseUrl) {

    static final String SERVICE = "reviews";

    /** The fault-injection tutorial relies on these two numbers (docs/contract.md, reviews). */
    static final Duration BLACK_RATINGS_TIMEOUT = Duration.ofSeconds(10);

    static final Duration OTHER_RATINGS_TIMEOUT = Duration.ofMillis(2500);

    public static ReviewsConfig fromEnv(Map<String, String> env) {
        EnvGrammar g = new EnvGrammar(env);
        int port = g.integer("PORT", 9080, 1, 65535);
        String listenAddress = listenAddress(g);
        boolean noDelay = g.bool("HTTP_NODELAY", true);
        boolean keepAlive = g.bool("HTTP_KEEPALIVE", true);
        int keepAliveTimeout = g.integer("HTTP_KEEPALIVE_TIMEOUT_SECONDS", 60, 1, 3600);
        int headerTimeout = g.integer("HTTP_HEADER_TIMEOUT_SECONDS", 10, 1, 300);
        int maxConnections = g.integer("HTTP_MAX_CONNECTIONS", 1024, 1, 100_000);
        boolean upstreamKeepAlive = g.bool("UPSTREAM_KEEPALIVE", true);
        int maxRequests = g.integer("UPSTREAM_MAX_REQUESTS_PER_CONNECTION", 100, 1, 1_000_000);
        int shutdownTimeout = g.integer("SHUTDOWN_TIMEOUT_SECONDS", 10, 1, 300);
        boolean accessLog = g.bool("ACCESS_LOG", false);
        boolean serverTiming = g.bool("SERVER_TIMING", true);
        String logLevel = g.oneOf("LOG_LEVEL", "info", Set.of("debug", "info", "warn", "error"));
        boolean enableRatings = g.bool("ENABLE_RATINGS", false);
        // Upstream uses STAR_COLOR verbatim (it is echoed into the JSON), so do we.
        String starColor = g.raw("STAR_COLOR") == null ? "black" : g.raw("STAR_COLOR");
        String clusterName = g.raw("CLUSTER_NAME") == null ? "null" : g.raw("CLUSTER_NAME");
        String serviceVersion =
                g.raw("SERVICE_VERSION") == null ? "" : g.raw("SERVICE_VERSION").strip();
        String ratingsHost = g.host("RATINGS_HOSTNAME", "ratings");
        int ratingsPort = g.integer("RATINGS_SERVICE_PORT", 9080, 1, 65535);
        String domain = g.raw("SERVICES_DOMAIN") == null ? "" : g.raw("SERVICES_DOMAIN").strip();
        String host = domain.isEmpty() ? ratingsHost : ratingsHost + "." + domain;
        return new ReviewsConfig(
                port,
                listenAddress,
                noDelay,
                keepAlive,
                keepAliveTimeout,
                headerTimeout,
                maxConnections,
                upstreamKeepAlive,
                maxRequests,
                shutdownTimeout,
                accessLog,
                serverTiming,
                logLevel,
                enableRatings,
                starColor,
                clusterName,
                podName(env.get("HOSTNAME")),
                serviceVersion,
                "http://" + bracketIpv6(host) + ":" + ratingsPort);
    }

    /**
     * Black stars wait 10 s for ratings, any other colour 2.5 s (upstream compares with "black"
     * exactly).
     */
    public Duration ratingsTimeout() {
        return "black".equals(starColor) ? BLACK_RATINGS_TIMEOUT : OTHER_RATINGS_TIMEOUT;
    }

    /** The name the logs and the README use for the running variant. */
    public String variant() {
        if (!enableRatings) {
            return "v1 (no ratings)";
        }
        return ("black".equals(starColor) ? "v2" : "v3") + " (" + starColor + " stars)";
    }

    /**
     * The same settings on another port; tests pass 0 for an ephemeral one, which PORT does not
     * allow.
     */
    public ReviewsConfig withPort(int newPort) {
        return new ReviewsConfig(
                newPort,
                listenAddress,
                httpNoDelay,
                httpKeepAlive,
                httpKeepAliveTimeoutSeconds,
                httpHeaderTimeoutSeconds,
                httpMaxConnections,
                upstreamKeepAlive,
                upstreamMaxRequestsPerConnection,
                shutdownTimeoutSeconds,
                accessLog,
                serverTiming,
                logLevel,
                enableRatings,
                starColor,
                clusterName,
                podName,
                serviceVersion,
                ratingsBaseUrl);
    }

    public Duration shutdownTimeout() {
        return Duration.ofSeconds(shutdownTimeoutSeconds);
    }

    private static String listenAddress(EnvGrammar g) {
        String value = g.raw("LISTEN_ADDRESS");
        if (value == null) {
            return "0.0.0.0";
        }
        String address = value.strip();
        // Literal addresses only: resolving a name here would make start-up depend on DNS.
        if (address.isEmpty() || !isIpLiteral(address)) {
            throw new BadConfigException("LISTEN_ADDRESS", value, "an IPv4 or IPv6 address");
        }
        return address;
    }

    private static boolean isIpLiteral(String address) {
        if (!address.matches("[0-9.]+|[0-9a-fA-F:.%]*:[0-9a-fA-F:.%]*")) {
            return false;
        }
        try {
            InetAddress.getByName(address);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static String bracketIpv6(String host) {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** Upstream prints $HOSTNAME; bash does not export it, so fall back to the machine's name. */
    private static String podName(String hostnameEnv) {
        if (hostnameEnv != null && !hostnameEnv.isBlank()) {
            return hostnameEnv;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
