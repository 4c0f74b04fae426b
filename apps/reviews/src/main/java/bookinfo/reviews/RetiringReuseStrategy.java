package bookinfo.reviews;

import org.apache.hc.core5.http.ConnectionReuseStrategy;
import org.apache.hc.core5.http.EndpointDetails;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.impl.DefaultConnectionReuseStrategy;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http.protocol.HttpCoreContext;

/**
 * Keeps an outbound connection only while it has served fewer than
 * UPSTREAM_MAX_REQUESTS_PER_CONNECTION requests. Without a mesh, kube-proxy balances per
 * connection, so retiring connections is what spreads load over ratings pods. With
 * UPSTREAM_KEEPALIVE=false nothing is reused.
 */
final class RetiringReuseStrategy implements ConnectionReuseStrategy {

    private final boolean reuse;
    private final int maxRequestsPerConnection;

    RetiringReuseStrategy(boolean reuse, int maxRequestsPerConnection) {
        this.reuse = reuse;
        this.maxRequestsPerConnection = maxRequestsPerConnection;
    }

    @Override
    public boolean keepAlive(HttpRequest request, HttpResponse response, HttpContext context) {
        if (!reuse) {
            return false;
        }
        EndpointDetails endpoint = HttpCoreContext.cast(context).getEndpointDetails();
        // The count includes the request that just completed.
        if (endpoint != null && endpoint.getRequestCount() >= maxRequestsPerConnection) {
            return false;
        }
        return DefaultConnectionReuseStrategy.INSTANCE.keepAlive(request, response, context);
    }
}
