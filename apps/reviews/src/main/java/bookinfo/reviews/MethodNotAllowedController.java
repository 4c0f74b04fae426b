package bookinfo.reviews;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RestController;

/**
 * Any method other than GET/HEAD on a known route answers 405 with the JSON error and an Allow header.
 * A mapping without a method condition loses to the GET mappings for GET and HEAD (GET and HEAD of
 * /reviews/{id} never get here: ReviewsRoute maps them first) and takes every other method, even
 * ones Spring has no enum for; OPTIONS needs its own mapping, or Spring answers it 200 by itself.
 */
@RestController
class MethodNotAllowedController {

    @RequestMapping({Routes.HEALTH, Routes.METRICS, Routes.REVIEWS})
    ResponseEntity<byte[]> otherMethods() {
        return JsonResponses.methodNotAllowed();
    }

    @RequestMapping(path = {Routes.HEALTH, Routes.METRICS, Routes.REVIEWS}, method = RequestMethod.OPTIONS)
    ResponseEntity<byte[]> options() {
        return JsonResponses.methodNotAllowed();
    }
}
