package bookinfo.reviews;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Spring Boot's error page (/error) for errors raised outside Spring MVC's handlers (sendError from
 * Jetty inside the web application, an exception escaping a filter): the same JSON errors, in place
 * of Boot's BasicErrorController. A direct request for /error is just an unknown path.
 */
@RestController
class JsonErrorController implements ErrorController {

    @RequestMapping("${server.error.path:/error}")
    ResponseEntity<ErrorBody> error(HttpServletRequest request) {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        if (!(status instanceof Integer code) || code < 400 || code > 599) {
            return ErrorResponses.json(HttpStatus.NOT_FOUND)
                    .body(ErrorBody.of(HttpStatus.NOT_FOUND));
        }
        HttpStatusCode statusCode = HttpStatusCode.valueOf(code);
        ResponseEntity.BodyBuilder response = ErrorResponses.json(statusCode);
        if (code == 405) {
            response.header(HttpHeaders.ALLOW, ErrorResponses.ALLOW);
        }
        return response.body(ErrorBody.of(statusCode));
    }
}
