package bookinfo.reviews;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.DefaultLifecycleProcessor;
import org.springframework.core.Ordered;
import org.springframework.web.filter.RequestContextFilter;

/** Wiring: one instance of each collaborator, built from the parsed ReviewsConfig. */
@Configuration(proxyBeanMethods = false)
class ReviewsBeans {

    @Bean
    ObjectMapper objectMapper() {
        return new ObjectMapper();
    }

    @Bean(destroyMethod = "close")
    UpstreamHttpClient upstreamHttpClient(ReviewsConfig config) {
        return UpstreamHttpClient.build(config);
    }

    @Bean
    RatingsClient ratingsClient(UpstreamHttpClient upstreamHttpClient, ObjectMapper json, ReviewsConfig config) {
        return new RatingsClient(upstreamHttpClient, json, config);
    }

    @Bean
    ReviewsBody reviewsBody(ObjectMapper json, ReviewsConfig config) {
        return new ReviewsBody(json, config);
    }

    @Bean
    ReviewsController reviewsController(ReviewsBody body, RatingsClient ratings, DrainingResponses draining,
            ReviewsConfig config) {
        return new ReviewsController(body, ratings, draining, config);
    }

    @Bean
    ReviewsRoute reviewsRoute(ReviewsController reviews) {
        return new ReviewsRoute(reviews);
    }

    @Bean
    HttpMetrics httpMetrics() {
        return new HttpMetrics();
    }

    @Bean
    FilterRegistrationBean<RequestObserver> requestObserver(HttpMetrics metrics, ReviewsConfig config, Hooks hooks) {
        AccessLog accessLog = config.accessLog() ? new AccessLog(hooks.clock(), hooks.stdout()) : null;
        FilterRegistrationBean<RequestObserver> registration =
                new FilterRegistrationBean<>(new RequestObserver(metrics, accessLog, hooks.nanoTime()));
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.addUrlPatterns("/*");
        return registration;
    }

    /**
     * Keeps Spring Boot from installing its RequestContextFilter (it backs off when a registration for
     * that filter type exists): it only binds the request to the thread for filters after it, and the
     * one filter here (RequestObserver) does not use it; DispatcherServlet binds it again itself.
     */
    @Bean
    FilterRegistrationBean<RequestContextFilter> requestContextFilterOff() {
        FilterRegistrationBean<RequestContextFilter> registration =
                new FilterRegistrationBean<>(new RequestContextFilter());
        registration.setEnabled(false);
        return registration;
    }

    /** Bounds the graceful web-server stop (Spring's "shutdown phase") by SHUTDOWN_TIMEOUT_SECONDS. */
    @Bean
    DefaultLifecycleProcessor lifecycleProcessor(ReviewsConfig config) {
        DefaultLifecycleProcessor processor = new DefaultLifecycleProcessor();
        processor.setTimeoutPerShutdownPhase(config.shutdownTimeout().toMillis());
        return processor;
    }
}
