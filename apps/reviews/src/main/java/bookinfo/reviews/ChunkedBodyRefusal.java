package bookinfo.reviews;

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
 * A servlet filter (second, after RequestObserver) that refuses every request carrying
 * Transfer-Encoding, before any route runs and without reading its body: 411 Length Required when
 * the field is exactly "chunked" in HTTP/1.1, else 400; either with "Connection: close", so Jetty
 * closes the connection instead of reading the body to find the next request, and nothing in the
 * body is ever read as a request.
 *
 * <p>Why 411 for every chunked body: no route of reviews takes a body, and a chunked body is the
 * only framing left that a front proxy and reviews could read differently. Jetty's parser (strict
 * RFC 7230 mode, JettyKnobs) has already refused what is ambiguous with 400 before this runs:
 * Content-Length beside Transfer-Encoding, codings other than a final "chunked", a folded or
 * repeated field. Refusing all chunked bodies with the status that says "send a Content-Length"
 * also answers chunk syntax Jetty would only check while reading the body. A chunked request body
 * was accepted and dropped before; no client of reviews sends one.
 *
 * <p>The value check stays as a second line: Transfer-Encoding in an HTTP/1.0 request is a 400 (RFC
 * 9112 section 6.1 says such a message's framing is faulty), as is any value but "chunked".
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
