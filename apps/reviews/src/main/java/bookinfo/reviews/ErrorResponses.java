package bookinfo.reviews;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/** Turns Spring MVC's exceptions (no handler, wrong method, ...) into the JSON errors of the catalogue. */
@RestControllerAdvice
class ErrorResponses {

    private static final Logger log = LoggerFactory.getLogger(ErrorResponses.class);

    @ExceptionHandler(Exception.class)
    ResponseEntity<byte[]> handle(Exception e) {
        if (e instanceof ErrorResponse known) {
            return JsonResponses.error(known.getStatusCode());
        }
        log.error("request failed", e);
        return JsonResponses.error(HttpStatus.INTERNAL_SERVER_ERROR);
    }
}
