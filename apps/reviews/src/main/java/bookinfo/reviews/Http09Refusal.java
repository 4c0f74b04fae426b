package bookinfo.reviews;

import jakarta.servlet.ServletException;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * An engine valve (TomcatKnobs) that refuses HTTP/0.9: a request line without a version ("GET
 * /health" then CRLF or LF). Tomcat still serves such requests the HTTP/0.9 way, the body alone
 * with no status line and no headers, so a client or proxy expecting HTTP/1.x reads a bare JSON
 * body as if it were a response head. An HTTP/0.9 response cannot carry a status either, so the
 * refusal is to write nothing: Tomcat then closes the connection (HTTP/0.9 has no keep-alive), and
 * the client sees the connection close at once, without a byte. Tomcat reports such a request with
 * an empty protocol string; the valve sits before the host, so neither the application nor an error
 * page writes a body for it.
 */
public class Http09Refusal extends ValveBase {

    public Http09Refusal() {
        super(true);
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        if ("".equals(request.getProtocol())) {
            // Only for the record (there is no status line to carry it).
            response.setStatus(400);
            return;
        }
        getNext().invoke(request, response);
    }
}
