package bookinfo.reviews;

import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Starts the Spring Boot application for a parsed config; main and the tests share this path. The
 * knobs become Spring Boot properties (properties()), which take precedence over every other
 * property source, so SERVER_* / SPRING_* variables cannot override them.
 */
public final class ReviewsServer {

    private static final Logger log = LoggerFactory.getLogger(ReviewsServer.class);

    /** How long after SHUTDOWN_TIMEOUT_SECONDS the deadline hook gives Spring to finish closing. */
    static final long DEADLINE_SLACK_MILLIS = 250;

    private ReviewsServer() {}

    /** The knobs as Spring Boot properties; the fixed settings are in application.properties. */
    static Map<String, Object> properties(ReviewsConfig config) {
        return Map.of(
                "server.port",
                config.port(),
                "server.address",
                config.listenAddress(),
                // Jetty's idle timeout: how long a kept-alive connection may stay idle. While a
                // request is served it is HTTP_HEADER_TIMEOUT_SECONDS, and a request head has an
                // overall deadline (HeadDeadline, JettyKnobs). Keep-alive off: JettyKnobs.
                "server.jetty.connection-idle-timeout",
                config.httpKeepAliveTimeoutSeconds() + "s",
                // Beyond it Jetty stops accepting: new connections wait in the listen backlog.
                "server.jetty.max-connections",
                config.httpMaxConnections(),
                "spring.lifecycle.timeout-per-shutdown-phase",
                config.shutdownTimeoutSeconds() + "s",
                "logging.level.root",
                config.logLevel());
    }

    public static ConfigurableApplicationContext start(ReviewsConfig config, Hooks hooks) {
        SpringApplication app = new SpringApplication(ReviewsApplication.class);
        StandardEnvironment environment = new StandardEnvironment();
        environment
                .getPropertySources()
                .addFirst(new MapPropertySource("reviews-knobs", properties(config)));
        app.setEnvironment(environment);
        app.addInitializers(
                context -> {
                    context.getBeanFactory().registerSingleton("reviewsConfig", config);
                    context.getBeanFactory().registerSingleton("hooks", hooks);
                });
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

    /**
     * The process's start: SIGTERM/SIGINT run Spring Boot's shutdown hook, which closes the context
     * (graceful shutdown: stop accepting, wait up to SHUTDOWN_TIMEOUT_SECONDS for in-flight
     * requests, stop Jetty). The JVM would then exit 143/130; a Spring Boot shutdown handler, run
     * after the context is closed, ends the process with 0, or 1 when requests were still in flight
     * as the drain ended (DrainVerdict). A second hook bounds the whole drain: it exits 1 if the
     * close is still going just after the timeout (stopping Jetty waits for its threads, which may
     * be stuck in a call to ratings for seconds).
     */
    static void startWithExitStatus(ReviewsConfig config) {
        ConfigurableApplicationContext context = start(config, Hooks.system());
        DrainVerdict drain = context.getBean(DrainVerdict.class);
        SpringApplication.getShutdownHandlers()
                .add(() -> Runtime.getRuntime().halt(drain.cutOff() ? 1 : 0));
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    System.err.println(
                                            ReviewsConfig.SERVICE
                                                    + ": shutting down, draining for up to "
                                                    + config.shutdownTimeoutSeconds()
                                                    + " s");
                                    try {
                                        Thread.sleep(
                                                config.shutdownTimeout().toMillis()
                                                        + DEADLINE_SLACK_MILLIS);
                                    } catch (InterruptedException e) {
                                        return;
                                    }
                                    System.err.println(
                                            ReviewsConfig.SERVICE
                                                    + ": shutdown timeout reached, requests cut off");
                                    Runtime.getRuntime().halt(1);
                                },
                                "reviews-shutdown-deadline"));
    }

    public static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }
}
