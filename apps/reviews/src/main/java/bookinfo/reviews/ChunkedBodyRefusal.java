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
 * the field is exactly "chunked" in HTTP/1.1, else 400. Tomcat closes the connection after either
 * (both are among the statuses its HTTP/1.1 processor ends a connection on), so nothing in the body
 * is ever read as a request.
 *
 * <p>Why 411 for every chunked body: no route of reviews takes a body, and this is the only place a
 * request that carried both Content-Length and Transfer-Encoding can still be refused. Tomcat
 * (checked in 10.1.55 and 10.1.61, Http11Processor.prepareInputFilters) deletes the Content-Length
 * of such a request and frames it by the chunks before any valve or filter sees it, so it looks
 * exactly like a plain chunked request here. Refusing all of them with the status that says "send a
 * Content-Length" answers the ambiguous one with a 4xx too, as productpage does for /login. A
 * chunked request body was accepted and dropped before; no client of reviews sends one.
 *
 * <p>The value check first: Tomcat already answers 400 when "chunked" is not the last coding or
 * appears twice, and 501 for a coding it does not know; what is left is a value folded onto the
 * next line (obs-fold): Tomcat joins folded lines with a space, and since it strips leading and
 * trailing blanks from every value, a Transfer-Encoding of " chunked" can only come from
 * "Transfer-Encoding:" CRLF SP "chunked", the classic way to hide the field from a front proxy.
 * Transfer-Encoding in an HTTP/1.0 request is a 400 too: RFC 9112 section 6.1 says such a message's
 * framing is faulty.
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
        if (codings.size() != 1
                || !"chunked".equalsIgnoreCase(codings.get(0))
                || !"HTTP/1.1".equals(request.getProtocol())) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST);
            return;
        }
        response.sendError(HttpServletResponse.SC_LENGTH_REQUIRED);
    }
}
