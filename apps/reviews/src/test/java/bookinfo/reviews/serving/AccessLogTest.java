package bookinfo.reviews.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class AccessLogTest {

    @Test
    void lineIsRfc3339TimeServiceMethodPathStatusAndMilliseconds() {
        Clock fixed = Clock.fixed(Instant.parse("2024-03-01T12:34:56.789Z"), ZoneOffset.UTC);
        RequestObserver.AccessLog log = new RequestObserver.AccessLog(fixed, System.out);
        assertEquals(
                "2024-03-01T12:34:56.789Z reviews GET /reviews/0 200 1.235",
                log.line("GET", "/reviews/0", 200, 1_234_567));
        assertEquals(
                "2024-03-01T12:34:56.789Z reviews HEAD /nope 404 0.000",
                log.line("HEAD", "/nope", 404, 0));
    }
}
