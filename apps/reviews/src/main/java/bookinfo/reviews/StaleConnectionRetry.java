package bookinfo.reviews;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;

/**
 * One immediate retry when a pooled connection turns out to have been closed by the peer (it
 * answers nothing or resets). Never retries on a response (the default strategy retries 503 and
 * 429, which would hide the faults the ratings versions inject) nor on timeouts or refused
 * connections.
 */
final class StaleConnectionRetry implements HttpRequestRetryStrategy {

    @Override
    public boolean retryRequest(
            HttpRequest request, IOException exception, int execCount, HttpContext context) {
        if (execCount > 1) {
            return false;
        }
        return exception instanceof NoHttpResponseException
                || (exception instanceof SocketException
                        && !(exception instanceof ConnectException));
    }

    @Override
    public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
        return false;
    }

    @Override
    public TimeValue getRetryInterval(HttpResponse response, int execCount, HttpContext context) {
        return TimeValue.ZERO_MILLISECONDS;
    }
}
