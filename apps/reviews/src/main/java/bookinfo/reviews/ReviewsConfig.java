package bookinfo.reviews;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Everything the service reads from its environment, parsed once at start with the env-var grammar
 * all four services share (docs/configuration.md); the README lists what reviews reads.
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

    public static final String SERVICE = "reviews";

    /** A knob outside the grammar; main turns it into exit status 2. */
    public static final class BadConfigException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        BadConfigException(String variable, String value, String want) {
            super("invalid " + variable + "=" + quote(value) + ": want " + want);
        }

        /** Go-style %q, so blanks and control characters stay visible on one line. */
        static String quote(String value) {
            StringBuilder out = new StringBuilder(value.length() + 2).append('"');
            for (char c : value.toCharArray()) {
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default ->
                            out.append(
                                    c < 0x20 || c == 0x7f
                                            ? String.format("\\x%02x", (int) c)
                                            : String.valueOf(c));
                }
            }
            return out.append('"').toString();
        }
    }

    public static ReviewsConfig fromEnv(Map<String, String> env) {
        return new ReviewsConfig(
                integer(env, "PORT", 9080, 1, 65535),
                listenAddress(env.get("LISTEN_ADDRESS")),
                bool(env, "HTTP_NODELAY", true),
                bool(env, "HTTP_KEEPALIVE", true),
                integer(env, "HTTP_KEEPALIVE_TIMEOUT_SECONDS", 60, 1, 3600),
                integer(env, "HTTP_HEADER_TIMEOUT_SECONDS", 10, 1, 300),
                integer(env, "HTTP_MAX_CONNECTIONS", 1024, 1, 100_000),
                bool(env, "UPSTREAM_KEEPALIVE", true),
                integer(env, "UPSTREAM_MAX_REQUESTS_PER_CONNECTION", 100, 1, 1_000_000),
                integer(env, "SHUTDOWN_TIMEOUT_SECONDS", 10, 1, 300),
                bool(env, "ACCESS_LOG", false),
                bool(env, "SERVER_TIMING", true),
                oneOf(env, "LOG_LEVEL", "info", Set.of("debug", "info", "warn", "error")),
                bool(env, "ENABLE_RATINGS", false),
                // Echoed verbatim into the JSON, as upstream does.
                env.getOrDefault("STAR_COLOR", "black"),
                env.getOrDefault("CLUSTER_NAME", "null"),
                podName(env.get("HOSTNAME")),
                env.getOrDefault("SERVICE_VERSION", "").strip(),
                ratingsBaseUrl(env));
    }

    private static String ratingsBaseUrl(Map<String, String> env) {
        String host = host(env, "RATINGS_HOSTNAME", "ratings");
        int port = integer(env, "RATINGS_SERVICE_PORT", 9080, 1, 65535);
        String domain = env.getOrDefault("SERVICES_DOMAIN", "").strip();
        host = domain.isEmpty() ? host : host + "." + domain;
        boolean bareIpv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
        return "http://" + (bareIpv6 ? "[" + host + "]" : host) + ":" + port;
    }

    /** Black stars wait 10 s for ratings, any other colour 2.5 s (docs/contract.md, reviews). */
    public Duration ratingsTimeout() {
        return "black".equals(starColor) ? Duration.ofSeconds(10) : Duration.ofMillis(2500);
    }

    /** The name the logs and the README use for the running variant. */
    public String variant() {
        if (!enableRatings) {
            return "v1 (no ratings)";
        }
        return ("black".equals(starColor) ? "v2" : "v3") + " (" + starColor + " stars)";
    }

    static boolean bool(Map<String, String> env, String name, boolean fallback) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String word = value.strip().toLowerCase(Locale.ROOT);
        if (!"true".equals(word) && !"false".equals(word)) {
            throw new BadConfigException(name, value, "true or false");
        }
        return "true".equals(word);
    }

    /** Plain decimal digits only: Integer.parseInt would also take "+5" and "-0". */
    static int integer(Map<String, String> env, String name, int fallback, int min, int max) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String digits = value.strip();
        if (digits.isEmpty()
                || digits.length() > 10
                || !digits.chars().allMatch(c -> c >= '0' && c <= '9')
                || Long.parseLong(digits) < min
                || Long.parseLong(digits) > max) {
            throw new BadConfigException(name, value, "an integer from " + min + " to " + max);
        }
        return Integer.parseInt(digits);
    }

    static String oneOf(
            Map<String, String> env, String name, String fallback, Set<String> allowed) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String word = value.strip().toLowerCase(Locale.ROOT);
        if (!allowed.contains(word)) {
            throw new BadConfigException(
                    name, value, "one of " + String.join(", ", allowed.stream().sorted().toList()));
        }
        return word;
    }

    /** A peer host name: unset means the default, set but blank is a mistake worth failing on. */
    static String host(Map<String, String> env, String name, String fallback) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String host = value.strip();
        if (host.isEmpty()
                || host.chars()
                        .anyMatch(c -> c <= ' ' || c == '/' || c == '?' || c == '#' || c == '@')) {
            throw new BadConfigException(name, value, "a host name");
        }
        return host;
    }

    /** Literal addresses only: resolving a name here would make start-up depend on DNS. */
    private static String listenAddress(String value) {
        if (value == null) {
            return "0.0.0.0";
        }
        String address = value.strip();
        if (!address.matches("[0-9.]+|[0-9a-fA-F:.%]*:[0-9a-fA-F:.%]*") || !isAddress(address)) {
            throw new BadConfigException("LISTEN_ADDRESS", value, "an IPv4 or IPv6 address");
        }
        return address;
    }

    private static boolean isAddress(String literal) {
        try {
            InetAddress.getByName(literal);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
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
