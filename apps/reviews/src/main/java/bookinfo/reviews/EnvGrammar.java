package bookinfo.reviews;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The one env-var grammar shared by all four services (docs/configuration.md). */
final class EnvGrammar {

    private final Map<String, String> env;

    EnvGrammar(Map<String, String> env) {
        this.env = env;
    }

    /** Raw value, or null when unset. */
    String raw(String name) {
        return env.get(name);
    }

    boolean bool(String name, boolean fallback) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String word = value.strip().toLowerCase(Locale.ROOT);
        if ("true".equals(word)) {
            return true;
        }
        if ("false".equals(word)) {
            return false;
        }
        throw new BadConfigException(name, value, "true or false");
    }

    int integer(String name, int fallback, int min, int max) {
        String value = env.get(name);
        if (value == null) {
            return fallback;
        }
        String digits = value.strip();
        // Only plain decimal digits: Integer.parseInt would also take "+5" and "-0".
        if (digits.isEmpty()
                || digits.length() > 10
                || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new BadConfigException(name, value, "an integer from " + min + " to " + max);
        }
        long parsed = Long.parseLong(digits);
        if (parsed < min || parsed > max) {
            throw new BadConfigException(name, value, "an integer from " + min + " to " + max);
        }
        return (int) parsed;
    }

    String oneOf(String name, String fallback, Set<String> allowed) {
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
    String host(String name, String fallback) {
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
}
