package bookinfo.reviews;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * Every body leaves as bytes with an explicit Content-Length, so responses stay framed even with
 * keep-alive off (fortio waits out its timeout on a response that ends by closing).
 */
final class JsonResponses {

    static final byte[] NOT_FOUND = bytes("{\"error\":\"not found\"}");
    static final byte[] METHOD_NOT_ALLOWED = bytes("{\"error\":\"method not allowed\"}");

    /** Every route serves GET only; HEAD comes with GET. */
    static final String ALLOW = "GET, HEAD";

    private JsonResponses() {
    }

    static ResponseEntity<byte[]> json(HttpStatusCode status, byte[] body) {
        return ResponseEntity.status(status)
                .contentType(MediaType.APPLICATION_JSON)
                .contentLength(body.length)
                .body(body);
    }

    /**
     * The same response as json(status, body), written straight to the servlet response by a handler
     * that returns nothing (ReviewsController). It carries "Connection: close" once a drain has begun,
     * as DrainingResponses adds to the ResponseEntity answers.
     */
    static void write(HttpServletResponse response, int status, byte[] body, DrainingResponses draining)
            throws IOException {
        response.setStatus(status);
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setContentLength(body.length);
        if (draining.active()) {
            response.setHeader(HttpHeaders.CONNECTION, "close");
        }
        response.getOutputStream().write(body);
    }

    static ResponseEntity<byte[]> notFound() {
        return json(HttpStatus.NOT_FOUND, NOT_FOUND);
    }

    static ResponseEntity<byte[]> methodNotAllowed() {
        return ResponseEntity.status(HttpStatus.METHOD_NOT_ALLOWED)
                .header("Allow", ALLOW)
                .contentType(MediaType.APPLICATION_JSON)
                .contentLength(METHOD_NOT_ALLOWED.length)
                .body(METHOD_NOT_ALLOWED);
    }

    /** Any other error status: {"error":"<reason phrase in lower case>"}. */
    static ResponseEntity<byte[]> error(HttpStatusCode status) {
        if (status.value() == 404) {
            return notFound();
        }
        if (status.value() == 405) {
            return methodNotAllowed();
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        String reason = known == null ? "error" : known.getReasonPhrase().toLowerCase(Locale.ROOT);
        return json(status, bytes("{\"error\":\"" + reason + "\"}"));
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
