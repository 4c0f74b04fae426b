package bookinfo.reviews;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.DispatcherType;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.DefaultLifecycleProcessor;
import org.springframework.core.Ordered;

/** Wiring: one instance of each collaborator, built from the parsed ReviewsConfig. */
@Configuration(proxyBeanMethods = false)
class ReviewsBeans {

    @Bean
    ObjectMapper objectMapper() {
        return new ObjectMapper();
    }

    @Bean(destroyMethod = "close")
    CloseableHttpClient upstreamHttpClient(ReviewsConfig config) {
        return UpstreamHttpClient.build(config);
    }

    @Bean
    RatingsClient ratingsClient(CloseableHttpClient upstreamHttpClient, ObjectMapper json, ReviewsConfig config) {
        return new RatingsClient(upstreamHttpClient, json, config);
    }

    @Bean
    ReviewsBody reviewsBody(ObjectMapper json, ReviewsConfig config) {
        return new ReviewsBody(json, config);
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

    /** Bounds the graceful web-server stop (Spring's "shutdown phase") by SHUTDOWN_TIMEOUT_SECONDS. */
    @Bean
    DefaultLifecycleProcessor lifecycleProcessor(ReviewsConfig config) {
        DefaultLifecycleProcessor processor = new DefaultLifecycleProcessor();
        processor.setTimeoutPerShutdownPhase(config.shutdownTimeout().toMillis());
        return processor;
    }
}
