package bookinfo.reviews;

/**
 * A knob has a value outside the grammar of docs/configuration.md; main turns it into exit status
 * 2.
 */
public final class BadConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public BadConfigException(String variable, String value, String want) {
        super("invalid " + variable + "=" + quote(value) + ": want " + want);
    }

    /**
     * Go-style %q so blanks and control characters in the bad value stay visible in a one-line
     * message.
     */
    static String quote(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        out.append(String.format("\\x%02x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
