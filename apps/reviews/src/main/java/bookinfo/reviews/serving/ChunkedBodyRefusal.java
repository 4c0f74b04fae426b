package bookinfo.reviews.serving;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses every request carrying Transfer-Encoding before any route runs and without reading its
 * body (no route takes one): 411 when it is exactly "chunked" in HTTP/1.1, else 400; either with
 * "Connection: close", so Jetty closes instead of reading the body for the next request. Jetty's
 * parser has already refused ambiguous framing (DESIGN.md, "Deviations from the ordinary path").
 */
final class ChunkedBodyRefusal extends OncePerRequestFilter {

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        List<String> codings = Collections.list(request.getHeaders(HttpHeaders.TRANSFER_ENCODING));
        if (codings.isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader(HttpHeaders.CONNECTION, "close");
        if (codings.size() != 1
                || !"chunked".equalsIgnoreCase(codings.get(0))
                || !"HTTP/1.1".equals(request.getProtocol())) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST);
            return;
        }
        response.sendError(HttpServletResponse.SC_LENGTH_REQUIRED);
    }
}
