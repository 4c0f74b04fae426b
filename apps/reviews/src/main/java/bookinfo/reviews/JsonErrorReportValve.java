package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.http.HttpStatusCode;

/**
 * Tomcat's error report, for errors Tomcat answers before any servlet runs (a malformed request
 * line, an invalid URI): the same JSON error as everything else instead of Tomcat's HTML page,
 * which shows a stack trace. Installed as the host's errorReportValveClass (TomcatKnobs).
 */
public class JsonErrorReportValve extends ErrorReportValve {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        try {
            byte[] body = JSON.writeValueAsBytes(ErrorBody.of(HttpStatusCode.valueOf(status)));
            response.setContentType("application/json");
            response.setContentLength(body.length);
            OutputStream out = response.getOutputStream();
            out.write(body);
            out.flush();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        } catch (IOException | IllegalStateException e) {
            // The client is gone or the response is unusable; Tomcat closes the connection.
        }
    }
}
