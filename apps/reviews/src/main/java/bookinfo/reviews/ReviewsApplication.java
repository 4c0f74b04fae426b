package bookinfo.reviews;

import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.ServletWebServerFactoryAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.ComponentScan;

/**
 * Entry point. Only the three auto-configurations an MVC app on Tomcat needs are imported, instead of
 * scanning the whole catalogue: start-up time matters because the local stack waits for it.
 */
@SpringBootConfiguration
@ImportAutoConfiguration({
    ServletWebServerFactoryAutoConfiguration.class,
    DispatcherServletAutoConfiguration.class,
    WebMvcAutoConfiguration.class,
})
@ComponentScan
public class ReviewsApplication {

    public static void main(String[] args) {
        ReviewsConfig config;
        try {
            config = ReviewsConfig.fromEnv(System.getenv());
        } catch (BadConfigException e) {
            // Before Spring or logging starts: one line, status 2 (docs/configuration.md).
            System.err.println(ReviewsConfig.SERVICE + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        AtomicReference<ConfigurableApplicationContext> running = new AtomicReference<>();
        SignalShutdown.install(running, config.shutdownTimeout());
        try {
            running.set(ReviewsServer.start(config, Hooks.system()));
        } catch (RuntimeException e) {
            System.err.println(ReviewsConfig.SERVICE + ": failed to start: " + rootCause(e));
            System.exit(1);
        }
    }

    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }
}
