package bookinfo.reviews;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Errors raised by Tomcat itself (sendError outside Spring MVC) are forwarded here instead of
 * Tomcat's HTML report page. A direct request for /error is just an unknown path.
 */
@RestController
class JsonErrorController implements ErrorController {

    static final String PATH = "/error";

    @RequestMapping(PATH)
    ResponseEntity<byte[]> error(HttpServletRequest request) {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        if (!(status instanceof Integer code) || code < 400 || code > 599) {
            return JsonResponses.notFound();
        }
        return JsonResponses.error(HttpStatusCode.valueOf(code));
    }
}
