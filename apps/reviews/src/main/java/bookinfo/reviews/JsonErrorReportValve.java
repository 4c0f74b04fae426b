package bookinfo.reviews;

import java.io.IOException;
import java.io.OutputStream;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.HttpStatusCode;

/**
 * Errors Tomcat answers before any servlet runs (a malformed request line, an invalid URI) get the
 * same JSON error as everything else instead of Tomcat's HTML report, which shows a stack trace.
 */
public class JsonErrorReportValve extends ErrorReportValve {

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        byte[] body = JsonResponses.error(HttpStatusCode.valueOf(status)).getBody();
        try {
            response.setContentType("application/json");
            response.setContentLength(body.length);
            OutputStream out = response.getOutputStream();
            out.write(body);
            out.flush();
        } catch (IOException | IllegalStateException e) {
            // The client is gone or the response is unusable; Tomcat closes the connection.
        }
    }
}
