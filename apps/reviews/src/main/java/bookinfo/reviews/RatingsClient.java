package bookinfo.reviews;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * GET <ratings>/ratings/<id>; any failure (status, body, timeout, network) means every review is
 * unavailable.
 */
@Component
class RatingsClient {

    private static final Logger log = LoggerFactory.getLogger(RatingsClient.class);

    /** Copied from the incoming request (docs/contract.md, "Everywhere"), end-user for Istio. */
    static final List<String> PROPAGATED =
            List.of(
                    "x-request-id",
                    "x-ot-span-context",
                    "x-datadog-trace-id",
                    "x-datadog-parent-id",
                    "x-datadog-sampling-priority",
                    "traceparent",
                    "tracestate",
                    "x-cloud-trace-context",
                    "grpc-trace-bin",
                    "x-b3-traceid",
                    "x-b3-spanid",
                    "x-b3-parentspanid",
                    "x-b3-sampled",
                    "x-b3-flags",
                    "b3",
                    "sw8",
                    "end-user",
                    "user-agent",
                    "cookie",
                    "authorization",
                    "jwt");

    private final RestClient ratings;
    private final String starColor;

    RatingsClient(RestClient ratingsRestClient, ReviewsConfig config) {
        this.ratings = ratingsRestClient;
        this.starColor = config.starColor();
    }

    /** timing: where the call's wait and ratings' Server-Timing go; null for nowhere. */
    Ratings fetch(int productId, HttpHeaders incoming, ServerTiming.Calls timing) {
        long start = System.nanoTime();
        long[] wire = RatingsHttpClient.newWait();
        String[] reported = {null};
        try {
            return ratings.get()
                    .uri("/ratings/{productId}", productId)
                    .headers(outgoing -> propagate(incoming, outgoing))
                    .exchange(
                            (request, answer) -> {
                                reported[0] = answer.getHeaders().getFirst(ServerTiming.HEADER);
                                if (answer.getStatusCode().value() != 200) {
                                    log.debug(
                                            "ratings answered {} for product {}",
                                            answer.getStatusCode().value(),
                                            productId);
                                    return Ratings.unavailable(starColor);
                                }
                                return Ratings.of(answer.bodyTo(Ratings.Answer.class), starColor);
                            });
        } catch (RestClientException e) {
            log.debug("ratings call for product {} failed: {}", productId, e.toString());
            return Ratings.unavailable(starColor);
        } finally {
            if (timing != null) {
                long sent = wire[0] != 0 ? wire[0] : start;
                long end = wire[1] != 0 ? wire[1] : System.nanoTime();
                timing.add("ratings", end - sent, reported[0]);
            }
        }
    }

    private static void propagate(HttpHeaders incoming, HttpHeaders outgoing) {
        for (String name : PROPAGATED) {
            List<String> values = incoming.get(name);
            if (values != null) {
                outgoing.addAll(name, values);
            }
        }
    }
}
