package bookinfo.reviews;

import java.nio.charset.StandardCharsets;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class MetricsController {

    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpMetrics metrics;

    MetricsController(HttpMetrics metrics) {
        this.metrics = metrics;
    }

    @GetMapping(Routes.METRICS)
    ResponseEntity<byte[]> metrics() {
        byte[] body = metrics.render().getBytes(StandardCharsets.UTF_8);
        return ResponseEntity.status(HttpStatus.OK)
                .header(HttpHeaders.CONTENT_TYPE, CONTENT_TYPE)
                .contentLength(body.length)
                .body(body);
    }
}
