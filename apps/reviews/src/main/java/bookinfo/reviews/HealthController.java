package bookinfo.reviews;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class HealthController {

    private static final byte[] HEALTHY = JsonResponses.bytes("{\"status\":\"Reviews is healthy\"}");

    @GetMapping(Routes.HEALTH)
    ResponseEntity<byte[]> health() {
        return JsonResponses.json(HttpStatus.OK, HEALTHY);
    }
}
