package bookinfo.reviews;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** GET <ratings>/ratings/<id>; any failure (status, body, timeout, network) means Ratings.UNAVAILABLE. */
final class RatingsClient {

    private static final Logger log = LoggerFactory.getLogger(RatingsClient.class);

    private final CloseableHttpClient http;
    private final ObjectMapper json;
    private final String ratingsUrl;
    private final boolean keepAlive;

    RatingsClient(CloseableHttpClient http, ObjectMapper json, ReviewsConfig config) {
        this.http = http;
        this.json = json;
        this.ratingsUrl = config.ratingsBaseUrl() + "/ratings/";
        this.keepAlive = config.upstreamKeepAlive();
    }

    Ratings fetch(String productId, HttpServletRequest incoming) {
        HttpGet get = new HttpGet(ratingsUrl + productId);
        get.setHeader(HttpHeaders.ACCEPT, "application/json");
        for (String name : PropagatedHeaders.NAMES) {
            Enumeration<String> values = incoming.getHeaders(name);
            while (values.hasMoreElements()) {
                get.addHeader(name, values.nextElement());
            }
        }
        if (!keepAlive) {
            get.setHeader(HttpHeaders.CONNECTION, "close");
        }
        return execute(get);
    }

    /** Sends get on the pooled client and reads the answer as ratings; Warmup uses it too. */
    Ratings execute(HttpGet get) {
        try {
            return http.execute(get, response -> {
                HttpEntity entity = response.getEntity();
                if (response.getCode() != 200 || entity == null) {
                    log.debug("ratings answered {} for {}", response.getCode(), get.getRequestUri());
                    EntityUtils.consume(entity);
                    return Ratings.UNAVAILABLE;
                }
                return Ratings.parse(json, EntityUtils.toByteArray(entity));
            });
        } catch (Exception e) {
            log.debug("ratings call {} failed: {}", get.getRequestUri(), e.toString());
            return Ratings.UNAVAILABLE;
        }
    }
}
