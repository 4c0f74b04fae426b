package bookinfo.reviews;

import static org.eclipse.jetty.ee10.servlet.ServletContextRequest.getServletContextRequest;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The W3C Server-Timing header (docs/contract.md, "Server-Timing"): {@code app;dur=<ms>}
 * (DESIGN.md, "Server-Timing's app from Jetty's first byte"), the ratings call's {@code
 * ratings;dur=<ms>}, and what ratings reported, each name prefixed {@code ratings.}. Registered
 * inside WholeResponses, whose buffer keeps the response uncommitted until the chain has returned.
 */
final class ServerTiming extends OncePerRequestFilter {

    /** The request attribute holding this request's {@link Calls}. */
    static final String CALLS = ServerTiming.class.getName() + ".calls";

    static final String HEADER = "Server-Timing";

    /** Metrics carried up from one upstream answer, at most. */
    static final int MAX_FORWARDED = 16;

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}");
    private static final Pattern DUR =
            Pattern.compile("\\s*dur\\s*=\\s*\"?([0-9]+(?:\\.[0-9]+)?)\"?\\s*");

    /** The upstream calls of one request, in the order they ended. */
    static final class Calls {
        private final long start;
        private final List<String> metrics = new CopyOnWriteArrayList<>();

        Calls(long start) {
            this.start = start;
        }

        /** One call to upstream name: its wait, then what it reported (null: nothing). */
        void add(String name, long nanos, String upstreamHeader) {
            List<String> call = new ArrayList<>();
            call.add(metric(name, nanos));
            call.addAll(forwarded(name, upstreamHeader));
            metrics.addAll(call); // one step: a call's entries stay together
        }

        String header(long now) {
            List<String> all = new ArrayList<>(List.of(metric("app", now - start)));
            all.addAll(metrics);
            return String.join(", ", all);
        }
    }

    /** This request's calls, or null when SERVER_TIMING=false. */
    static Calls calls(HttpServletRequest request) {
        return request.getAttribute(CALLS) instanceof Calls c ? c : null;
    }

    static String metric(String name, long nanos) {
        return String.format(Locale.ROOT, "%s;dur=%.3f", name, nanos / 1e6);
    }

    /** An upstream's metrics with name. before each name; name and dur only. */
    static List<String> forwarded(String prefix, String header) {
        List<String> out = new ArrayList<>();
        if (header == null) {
            return out;
        }
        for (String entry : header.split(",")) {
            String[] parts = entry.strip().split(";");
            if (!TOKEN.matcher(parts[0]).matches()) {
                continue;
            }
            for (int i = 1; i < parts.length; i++) {
                Matcher dur = DUR.matcher(parts[i]);
                if (dur.matches()) {
                    out.add(prefix + "." + parts[0] + ";dur=" + dur.group(1));
                    break;
                }
            }
            if (out.size() == MAX_FORWARDED) {
                break;
            }
        }
        return out;
    }

    /** The error page's dispatch carries the header too, timed from the request's start. */
    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Calls calls = calls(request);
        if (calls == null) {
            calls = new Calls(getServletContextRequest(request).getBeginNanoTime());
            request.setAttribute(CALLS, calls);
        }
        try {
            chain.doFilter(request, response);
        } finally {
            if (!response.isCommitted()) {
                response.setHeader(HEADER, calls.header(System.nanoTime()));
            }
        }
    }
}
