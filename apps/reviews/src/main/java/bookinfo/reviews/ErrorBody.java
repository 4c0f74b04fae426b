package bookinfo.reviews;

import java.util.Locale;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;

/**
 * Every error body: {"error":"not found"}, {"error":"method not allowed"}, {"error":"<reason
 * phrase>"}.
 */
record ErrorBody(String error) {

    static ErrorBody of(HttpStatusCode status) {
        HttpStatus known = HttpStatus.resolve(status.value());
        return new ErrorBody(
                known == null ? "error" : known.getReasonPhrase().toLowerCase(Locale.ROOT));
    }
}
