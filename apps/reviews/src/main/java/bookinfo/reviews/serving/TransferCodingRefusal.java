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
 * Refuses with 400 and a close, before any route, a Transfer-Encoding other than exactly "chunked"
 * in HTTP/1.1 (RFC 9112 6.1), which Jetty's parser lets through (DESIGN.md, "The wire table").
 */
final class TransferCodingRefusal extends OncePerRequestFilter {

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        List<String> codings = Collections.list(request.getHeaders(HttpHeaders.TRANSFER_ENCODING));
        if (codings.isEmpty()
                || codings.size() == 1
                        && "chunked".equalsIgnoreCase(codings.get(0))
                        && "HTTP/1.1".equals(request.getProtocol())) {
            chain.doFilter(request, response);
            return;
        }
        response.setHeader(HttpHeaders.CONNECTION, "close");
        response.sendError(HttpServletResponse.SC_BAD_REQUEST);
    }
}
