package bookinfo.reviews.serving;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Every error as the JSON of docs/contract.md, {"error":"<reason phrase, lower case>"}, whatever
 * the request's Accept says, from each of the three places an error is made: Spring MVC's
 * exceptions (this advice), sendError and exceptions outside Spring MVC (Boot's /error page, {@link
 * Page}), and requests Jetty refuses before any servlet runs ({@link Jetty}).
 */
@RestControllerAdvice
class JsonErrors {

    /** Every route serves GET only; HEAD comes with GET. */
    static final String ALLOW = "GET, HEAD";

    private static final Logger log = LoggerFactory.getLogger(JsonErrors.class);

    record Body(String error) {

        static Body of(HttpStatusCode status) {
            HttpStatus known = HttpStatus.resolve(status.value());
            return new Body(
                    known == null ? "error" : known.getReasonPhrase().toLowerCase(Locale.ROOT));
        }
    }

    static ResponseEntity<Body> json(HttpStatusCode status) {
        ResponseEntity.BodyBuilder response =
                ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON);
        if (status.value() == 405) {
            response.header(HttpHeaders.ALLOW, ALLOW);
        }
        return response.body(Body.of(status));
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<Body> methodNotAllowed() {
        return json(HttpStatus.METHOD_NOT_ALLOWED);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Body> other(Exception e) {
        if (e instanceof ErrorResponse known) {
            return json(known.getStatusCode());
        }
        log.error("request failed", e);
        return json(HttpStatus.INTERNAL_SERVER_ERROR);
    }

    /** Boot's error page, in place of its BasicErrorController; a request for /error is a 404. */
    @RestController
    static class Page implements ErrorController {

        @RequestMapping("${server.error.path:/error}")
        ResponseEntity<Body> error(HttpServletRequest request) {
            Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
            if (!(status instanceof Integer code) || code < 400 || code > 599) {
                return json(HttpStatus.NOT_FOUND);
            }
            return json(HttpStatusCode.valueOf(code));
        }
    }

    /** The server's error handler (JettyKnobs), in place of Jetty's HTML page. */
    static class Jetty extends ErrorHandler {

        private static final ObjectMapper JSON = new ObjectMapper();
        private static final HttpField CONTENT_TYPE =
                new HttpField(HttpHeader.CONTENT_TYPE, "application/json");

        static byte[] body(int status) {
            try {
                return JSON.writeValueAsBytes(Body.of(HttpStatusCode.valueOf(status)));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        /** A request Jetty refused itself: its parser (400, 431, ...) or its URI checks. */
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            Object attribute = request.getAttribute(ERROR_STATUS);
            int status = attribute instanceof Integer code ? code : response.getStatus();
            if (status < 400) {
                status = 500;
            }
            // Jetty's parser answers a request line without a version 505; it is malformed: 400.
            if (HttpCompliance.Violation.HTTP_0_9
                    .getDescription()
                    .equals(request.getAttribute(ERROR_MESSAGE))) {
                status = 400;
            }
            byte[] body = body(status);
            response.setStatus(status);
            response.getHeaders().put(CONTENT_TYPE);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
            response.write(true, ByteBuffer.wrap(body), callback);
            return true;
        }
    }
}
