package bookinfo.reviews.serving;

import static bookinfo.reviews.ReviewsConfig.SERVICE;

import bookinfo.reviews.ReviewsApplication;
import bookinfo.reviews.ReviewsConfig;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Starts the application for a parsed config (main and the tests), its knobs as Spring Boot
 * properties ahead of every other source, so SERVER_* / SPRING_* variables cannot override them.
 */
public final class ReviewsServer {

    private static final Logger log = LoggerFactory.getLogger(ReviewsServer.class);

    /** How long after SHUTDOWN_TIMEOUT_SECONDS the deadline hook gives Spring to finish closing. */
    static final long DEADLINE_SLACK_MILLIS = 250;

    private ReviewsServer() {}

    /** The knobs as properties; the fixed settings are in application.properties. */
    static Map<String, Object> properties(ReviewsConfig config) {
        return Map.of(
                "server.port",
                config.port(),
                "server.address",
                config.listenAddress(),
                // While a request is served the idle timeout is the head timeout (HeadDeadline).
                "server.jetty.connection-idle-timeout",
                config.httpKeepAliveTimeoutSeconds() + "s",
                "server.jetty.max-connections",
                config.httpMaxConnections(),
                "spring.lifecycle.timeout-per-shutdown-phase",
                config.shutdownTimeoutSeconds() + "s",
                "logging.level.root",
                config.logLevel());
    }

    public static ConfigurableApplicationContext start(ReviewsConfig config) {
        SpringApplication app = new SpringApplication(ReviewsApplication.class);
        StandardEnvironment environment = new StandardEnvironment();
        environment
                .getPropertySources()
                .addFirst(new MapPropertySource("reviews-knobs", properties(config)));
        app.setEnvironment(environment);
        app.addInitializers(
                context -> context.getBeanFactory().registerSingleton("reviewsConfig", config));
        ConfigurableApplicationContext context = app.run();
        log.info(
                "reviews {}{} listening on http://{}:{}, ratings at {}",
                config.variant(),
                config.serviceVersion().isEmpty()
                        ? ""
                        : " SERVICE_VERSION=" + config.serviceVersion(),
                config.listenAddress(),
                port(context),
                config.enableRatings() ? config.ratingsBaseUrl() : "(not called)");
        return context;
    }

    /** Starts the process; the drain's exit status: DESIGN.md, "How each knob is implemented". */
    public static void startWithExitStatus(ReviewsConfig config) {
        RequestObserver drain = start(config).getBean(RequestObserver.class);
        SpringApplication.getShutdownHandlers()
                .add(() -> Runtime.getRuntime().halt(drain.cutOff() ? 1 : 0));
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> drainDeadline(config), "reviews-shutdown-deadline"));
    }

    private static void drainDeadline(ReviewsConfig config) {
        int seconds = config.shutdownTimeoutSeconds();
        System.err.println(SERVICE + ": shutting down, draining for up to " + seconds + " s");
        try {
            Thread.sleep(seconds * 1000L + DEADLINE_SLACK_MILLIS);
        } catch (InterruptedException e) {
            return;
        }
        System.err.println(SERVICE + ": shutdown timeout reached, requests cut off");
        Runtime.getRuntime().halt(1);
    }

    public static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }
}
