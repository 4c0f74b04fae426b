package bookinfo.reviews.serving;

import bookinfo.reviews.ReviewsConfig;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The servlet side of the layer: the filters, in this order, for every request Jetty dispatches
 * (RequestObserver: metrics, access log, the drain's verdict; TransferCodingRefusal;
 * WholeResponses, which also wraps the error page's dispatch), and the DispatcherServlet.
 */
@Configuration(proxyBeanMethods = false)
public class WebConfig {

    /** The order of a filter that must run inside WholeResponses (the response still open). */
    public static final int INSIDE_WHOLE_RESPONSES = Ordered.HIGHEST_PRECEDENCE + 3;

    /**
     * TRACE dispatched like every other method (404 or 405 JSON): FrameworkServlet's default would
     * follow our answer with HttpServlet's TRACE echo, as WholeResponses keeps it uncommitted.
     */
    static class TraceDispatcherServlet extends DispatcherServlet {

        private static final long serialVersionUID = 1L;

        @Override
        protected void doTrace(HttpServletRequest request, HttpServletResponse response)
                throws ServletException, IOException {
            processRequest(request, response);
        }

        /** CONNECT, no route either, is answered 404 and closed, as every service does. */
        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response)
                throws ServletException, IOException {
            if ("CONNECT".equals(request.getMethod())) {
                response.setHeader("Connection", "close");
            }
            super.service(request, response);
        }
    }

    /** Spring Boot registers this instead of its own DispatcherServlet (same bean name). */
    @Bean(name = DispatcherServletAutoConfiguration.DEFAULT_DISPATCHER_SERVLET_BEAN_NAME)
    DispatcherServlet dispatcherServlet() {
        return new TraceDispatcherServlet();
    }

    @Bean
    RequestObserver requestObserver(MeterRegistry registry, ReviewsConfig config) {
        RequestObserver.AccessLog accessLog =
                config.accessLog()
                        ? new RequestObserver.AccessLog(Clock.systemUTC(), System.out)
                        : null;
        return new RequestObserver(registry, accessLog, System::nanoTime);
    }

    @Bean
    WholeResponses wholeResponses() {
        return new WholeResponses();
    }

    @Bean
    FilterRegistrationBean<RequestObserver> requestObserverRegistration(RequestObserver observer) {
        return register(observer, 0, DispatcherType.REQUEST);
    }

    @Bean
    FilterRegistrationBean<TransferCodingRefusal> transferCodingRefusalRegistration() {
        return register(new TransferCodingRefusal(), 1, DispatcherType.REQUEST);
    }

    @Bean
    FilterRegistrationBean<WholeResponses> wholeResponsesRegistration(WholeResponses whole) {
        return register(whole, 2, DispatcherType.REQUEST, DispatcherType.ERROR);
    }

    private static <T extends Filter> FilterRegistrationBean<T> register(
            T filter, int place, DispatcherType first, DispatcherType... rest) {
        FilterRegistrationBean<T> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + place);
        registration.setDispatcherTypes(first, rest);
        return registration;
    }
}
