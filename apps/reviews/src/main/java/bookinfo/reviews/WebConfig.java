package bookinfo.reviews;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The servlet side of the web layer: the filters, for every request Jetty dispatches
 * (RequestObserver first: metrics, access log; ChunkedBodyRefusal; then WholeResponses, which also
 * wraps the error page's dispatch; ServerTiming inside it), and the DispatcherServlet.
 */
@Configuration(proxyBeanMethods = false)
class WebConfig {

    /** Spring Boot registers this instead of its own DispatcherServlet (same bean name). */
    @Bean(name = DispatcherServletAutoConfiguration.DEFAULT_DISPATCHER_SERVLET_BEAN_NAME)
    DispatcherServlet dispatcherServlet() {
        return new TraceDispatcherServlet();
    }

    @Bean
    RequestObserver requestObserver(MeterRegistry registry, ReviewsConfig config, Hooks hooks) {
        AccessLog accessLog =
                config.accessLog() ? new AccessLog(hooks.clock(), hooks.stdout()) : null;
        return new RequestObserver(registry, accessLog, hooks.nanoTime());
    }

    @Bean
    DrainVerdict drainVerdict(RequestObserver observer) {
        return new DrainVerdict(observer);
    }

    @Bean
    FilterRegistrationBean<RequestObserver> requestObserverRegistration(RequestObserver observer) {
        FilterRegistrationBean<RequestObserver> registration =
                new FilterRegistrationBean<>(observer);
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        return registration;
    }

    @Bean
    FilterRegistrationBean<ChunkedBodyRefusal> chunkedBodyRefusalRegistration() {
        FilterRegistrationBean<ChunkedBodyRefusal> registration =
                new FilterRegistrationBean<>(new ChunkedBodyRefusal());
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        return registration;
    }

    @Bean
    WholeResponses wholeResponses() {
        return new WholeResponses();
    }

    /** Inside WholeResponses: the response is still uncommitted when the chain returns. */
    @Bean
    FilterRegistrationBean<ServerTiming> serverTimingRegistration(
            ReviewsConfig config, Hooks hooks) {
        FilterRegistrationBean<ServerTiming> registration =
                new FilterRegistrationBean<>(new ServerTiming(hooks.nanoTime()));
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 3);
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ERROR);
        registration.setEnabled(config.serverTiming());
        return registration;
    }

    @Bean
    FilterRegistrationBean<WholeResponses> wholeResponsesRegistration(
            WholeResponses wholeResponses) {
        FilterRegistrationBean<WholeResponses> registration =
                new FilterRegistrationBean<>(wholeResponses);
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 2);
        registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ERROR);
        return registration;
    }
}
