package bookinfo.reviews;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Spring MVC's exceptions (no handler: 404, wrong method: 405, a non-int id: 404, ...) as the JSON
 * errors of docs/contract.md. The Content-Type is set here, so the body is JSON whatever the
 * request's Accept header says.
 */
@RestControllerAdvice
class ErrorResponses {

    /** Every route serves GET only; HEAD comes with GET. */
    static final String ALLOW = "GET, HEAD";

    private static final Logger log = LoggerFactory.getLogger(ErrorResponses.class);

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<ErrorBody> methodNotAllowed() {
        return json(HttpStatus.METHOD_NOT_ALLOWED)
                .header(HttpHeaders.ALLOW, ALLOW)
                .body(ErrorBody.of(HttpStatus.METHOD_NOT_ALLOWED));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ErrorBody> other(Exception e) {
        if (e instanceof ErrorResponse known) {
            return json(known.getStatusCode()).body(ErrorBody.of(known.getStatusCode()));
        }
        log.error("request failed", e);
        return json(HttpStatus.INTERNAL_SERVER_ERROR)
                .body(ErrorBody.of(HttpStatus.INTERNAL_SERVER_ERROR));
    }

    static ResponseEntity.BodyBuilder json(HttpStatusCode status) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON);
    }
}
