package bookinfo.reviews;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A servlet filter (second, after RequestObserver) that reads a chunked request body to its end
 * before the request is handled, so that a body breaking the chunked syntax is answered 400 and the
 * connection closed.
 *
 * Why: no route of reviews reads a body, so Tomcat used to answer first (200, 404, 405) and only
 * then read ("swallow") the body to find the next request. Its chunked parser is strict (a chunk
 * size that is not hex, "5 " or "5zz", a bare LF, chunk data not followed by CRLF, more than 8 hex
 * digits: all errors) and it closed the connection at the first bad byte, so nothing hidden in the
 * body ever ran; but the client saw a success for a request whose framing was broken. Reading the
 * body here makes Tomcat's parser fail while the response is still open: Tomcat itself then sets
 * 400 (408 if the client stops sending for HTTP_HEADER_TIMEOUT_SECONDS, Tomcat's read timeout), the
 * error page writes the JSON error, and Tomcat closes the connection after a 400/408 without
 * reading further. A well-formed body is read and dropped, as Tomcat would have, and the request
 * goes on. At most MAX_BODY bytes are read, Tomcat's own limit for a body it swallows
 * (maxSwallowSize); a longer body is answered 413 and the connection closed.
 *
 * Before that, the Transfer-Encoding field itself: anything but one field whose value is exactly
 * "chunked" (any case) is answered 400. Tomcat already answers 400 when "chunked" is not the last
 * coding or appears twice, and 501 for a coding it does not know, before any filter runs; what is
 * left to catch is a value folded onto the next line (obs-fold): Tomcat joins folded lines with a
 * space, and since it strips leading and trailing blanks from every value, a Transfer-Encoding of
 * " chunked" can only come from "Transfer-Encoding:" CRLF SP "chunked", the classic way to hide the
 * field from a front proxy. Transfer-Encoding in an HTTP/1.0 request is answered 400 too: RFC 9112
 * section 6.1 says such a message's framing is faulty.
 */
final class ChunkedBodyCheck extends OncePerRequestFilter {

    /** Tomcat's default maxSwallowSize (server.tomcat.max-swallow-size): 2 MiB. */
    static final long MAX_BODY = 2L * 1024 * 1024;

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        List<String> codings = Collections.list(request.getHeaders(HttpHeaders.TRANSFER_ENCODING));
        if (codings.isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        if (codings.size() != 1 || !codings.get(0).equalsIgnoreCase("chunked")
                || !"HTTP/1.1".equals(request.getProtocol())) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST);
            return;
        }
        byte[] buffer = new byte[8192];
        long total = 0;
        try {
            ServletInputStream body = request.getInputStream();
            for (int n = body.read(buffer); n != -1; n = body.read(buffer)) {
                total += n;
                if (total > MAX_BODY) {
                    response.sendError(HttpServletResponse.SC_REQUEST_ENTITY_TOO_LARGE);
                    return;
                }
            }
        } catch (IOException e) {
            // Tomcat has already answered the failed read with sendError (400, or 408 on a timeout).
            return;
        }
        chain.doFilter(request, response);
    }
}
