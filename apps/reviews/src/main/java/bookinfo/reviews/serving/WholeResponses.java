package bookinfo.reviews.serving;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * Holds each response, the error page's included, until the handler is done, then hands it to Jetty
 * in one piece (DESIGN.md, "Writes per response"), with "Connection: close" in a drain and after a
 * request body the route left unread (DESIGN.md, "The wire table").
 */
final class WholeResponses extends OncePerRequestFilter
        implements ApplicationListener<ContextClosedEvent> {

    private volatile boolean draining;

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        draining = true;
    }

    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        ContentCachingResponseWrapper whole = new ContentCachingResponseWrapper(response);
        try {
            chain.doFilter(request, whole);
        } finally {
            if ((draining || bodyLeftUnread(request)) && !response.isCommitted()) {
                response.setHeader(HttpHeaders.CONNECTION, "close");
            }
            whole.copyBodyToResponse();
        }
    }

    private static boolean bodyLeftUnread(HttpServletRequest request) throws IOException {
        boolean declared =
                request.getContentLengthLong() > 0
                        || request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
        return declared && !request.getInputStream().isFinished();
    }
}
