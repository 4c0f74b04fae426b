package bookinfo.reviews;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.routing.RoutingSupport;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpHeaders;
import org.apache.hc.core5.http.Method;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.net.URIAuthority;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** GET <ratings>/ratings/<id>; any failure (status, body, timeout, network) means Ratings.UNAVAILABLE. */
final class RatingsClient {

    private static final Logger log = LoggerFactory.getLogger(RatingsClient.class);

    /** Position of each propagated header in PropagatedHeaders.NAMES, by lower-case name. */
    private static final Map<String, Integer> PROPAGATED = new HashMap<>();

    static {
        for (int i = 0; i < PropagatedHeaders.NAMES.size(); i++) {
            PROPAGATED.put(PropagatedHeaders.NAMES.get(i), i);
        }
    }

    /**
     * Where calls go: a base URL parsed once, the way HttpClient parsed a request URI (scheme, the
     * authority the Host header shows, the route), so a call only has a path to add.
     */
    record Peer(String scheme, URIAuthority authority, HttpRoute route) {

        static Peer of(String baseUrl) {
            HttpGet parsed = new HttpGet(baseUrl + "/");
            try {
                return new Peer(parsed.getScheme(), parsed.getAuthority(),
                        UpstreamHttpClient.route(RoutingSupport.determineHost(parsed)));
            } catch (HttpException e) {
                throw new IllegalArgumentException("not an http URL: " + baseUrl, e);
            }
        }

        /** GET path on this peer, asking for JSON; the caller adds any other header. */
        ClassicHttpRequest get(String path) {
            ClassicHttpRequest get = new BasicClassicHttpRequest(Method.GET.name(), path);
            get.setScheme(scheme);
            get.setAuthority(authority);
            get.setHeader(HttpHeaders.ACCEPT, "application/json");
            return get;
        }
    }

    private final UpstreamHttpClient http;
    private final JsonFactory json;
    private final Peer ratings;
    private final boolean keepAlive;

    RatingsClient(UpstreamHttpClient http, ObjectMapper json, ReviewsConfig config) {
        this.http = http;
        this.json = json.getFactory();
        this.ratings = Peer.of(config.ratingsBaseUrl());
        this.keepAlive = config.upstreamKeepAlive();
    }

    Ratings fetch(String productId, HttpServletRequest incoming) {
        ClassicHttpRequest get = ratings.get("/ratings/" + productId);
        // One pass over the few headers the request has, rather than 21 case-insensitive searches of
        // them; the copies then go out in the order of PropagatedHeaders.NAMES, as they always have.
        boolean[] present = new boolean[PropagatedHeaders.NAMES.size()];
        boolean any = false;
        for (Enumeration<String> names = incoming.getHeaderNames(); names.hasMoreElements(); ) {
            Integer index = PROPAGATED.get(names.nextElement().toLowerCase(Locale.ROOT));
            if (index != null) {
                present[index] = true;
                any = true;
            }
        }
        for (int i = 0; any && i < present.length; i++) {
            if (present[i]) {
                String name = PropagatedHeaders.NAMES.get(i);
                Enumeration<String> values = incoming.getHeaders(name);
                while (values.hasMoreElements()) {
                    get.addHeader(name, values.nextElement());
                }
            }
        }
        if (!keepAlive) {
            get.setHeader(HttpHeaders.CONNECTION, "close");
        }
        return execute(ratings, get);
    }

    /** Sends get to peer over the pooled client and reads the answer as ratings; Warmup uses it too. */
    Ratings execute(Peer peer, ClassicHttpRequest get) {
        try {
            UpstreamHttpClient.Answer answer = http.execute(peer.route(), get);
            if (answer.status() != 200 || answer.body() == null) {
                log.debug("ratings answered {} for {}", answer.status(), get.getRequestUri());
                return Ratings.UNAVAILABLE;
            }
            return Ratings.parse(json, answer.body());
        } catch (Exception e) {
            log.debug("ratings call {} failed: {}", get.getRequestUri(), e.toString());
            return Ratings.UNAVAILABLE;
        }
    }
}
