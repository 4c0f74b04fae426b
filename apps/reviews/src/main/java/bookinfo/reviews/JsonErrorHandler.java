package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.springframework.http.HttpStatusCode;

/**
 * Jetty's error handler for what Jetty answers itself, before any servlet runs (a request it cannot
 * parse, an invalid URI, a head over the size limit): the same JSON error as everything else
 * instead of Jetty's HTML page. Installed as the server's error handler (JettyKnobs); errors raised
 * inside the application still go to JsonErrorController.
 */
class JsonErrorHandler extends ErrorHandler {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpField CONTENT_TYPE =
            new HttpField(HttpHeader.CONTENT_TYPE, "application/json");

    static byte[] body(int status) {
        try {
            return JSON.writeValueAsBytes(ErrorBody.of(HttpStatusCode.valueOf(status)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A request Jetty's parser refused: the body of the 400 (or 431, 505, ...) it sends. */
    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(CONTENT_TYPE);
        return ByteBuffer.wrap(body(status));
    }

    /** An error Jetty reports for a parsed request (e.g. a URI it refuses): the JSON body. */
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        Object attribute = request.getAttribute(ERROR_STATUS);
        int status = attribute instanceof Integer code ? code : response.getStatus();
        if (status < 400) {
            status = 500;
        }
        byte[] body = body(status);
        response.setStatus(status);
        response.getHeaders().put(CONTENT_TYPE);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }
}
