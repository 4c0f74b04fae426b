package bookinfo.reviews;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyAdvice;

/**
 * Once a drain has begun, responses still being produced say "Connection: close", so a client or
 * mesh proxy never picks the connection for another request while Tomcat is about to close it.
 */
@ControllerAdvice
class DrainingResponses implements ResponseBodyAdvice<Object> {

    private volatile boolean draining;

    void begin() {
        draining = true;
    }

    /** For handlers that write the servlet response themselves (ReviewsController), which no advice sees. */
    boolean active() {
        return draining;
    }

    @Override
    public boolean supports(MethodParameter returnType, Class<? extends HttpMessageConverter<?>> converterType) {
        return true;
    }

    @Override
    public Object beforeBodyWrite(Object body, MethodParameter returnType, MediaType contentType,
            Class<? extends HttpMessageConverter<?>> converterType, ServerHttpRequest request,
            ServerHttpResponse response) {
        if (draining) {
            response.getHeaders().set(HttpHeaders.CONNECTION, "close");
        }
        return body;
    }
}
