package bookinfo.reviews;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Spring's DispatcherServlet, with TRACE handled like every other method: mapped, so an unknown
 * path is 404 and a known route 405, both JSON (docs/contract.md). FrameworkServlet.doTrace is the
 * documented hook for this; its default would follow our 404/405 with HttpServlet's own TRACE echo
 * (a 200 message/http) whenever the response is not committed yet, which WholeResponses ensures.
 * CONNECT, no route either, is answered 404 and the connection closed, as every service does (the
 * wire table of docs/contract.md). Registered as the "dispatcherServlet" bean, which Spring Boot
 * uses instead of its own.
 */
class TraceDispatcherServlet extends DispatcherServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doTrace(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        processRequest(request, response);
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        if ("CONNECT".equals(request.getMethod())) {
            response.setHeader("Connection", "close");
        }
        super.service(request, response);
    }
}
