package bookinfo.reviews;

import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** Starts the Spring application for a parsed config; main and the tests share this path. */
public final class ReviewsServer {

    private static final Logger log = LoggerFactory.getLogger(ReviewsServer.class);

    private ReviewsServer() {
    }

    public static ConfigurableApplicationContext start(ReviewsConfig config, Hooks hooks) {
        SpringApplication app = new SpringApplication(ReviewsApplication.class);
        app.setBannerMode(Banner.Mode.OFF);
        // SignalShutdown owns SIGTERM/SIGINT: the JVM's own hook would exit 143, not 0.
        app.setRegisterShutdownHook(false);
        StandardEnvironment environment = new StandardEnvironment();
        // First in line, so our env grammar wins over Spring's relaxed binding of the same settings.
        environment.getPropertySources().addFirst(new MapPropertySource("reviews", Map.of(
                "logging.level.root", config.logLevel(),
                // Spring MVC warns on every 404: per-request logging is ACCESS_LOG's job only.
                "logging.level.org.springframework.web.servlet.PageNotFound", "error",
                "spring.mvc.dispatch-trace-request", "true",
                // Nothing listens for ServletRequestHandledEvent; publishing one per request is waste.
                "spring.mvc.publish-request-handled-events", "false",
                "spring.mvc.formcontent.filter.enabled", "false",
                "spring.web.resources.add-mappings", "false")));
        app.setEnvironment(environment);
        app.addInitializers(context -> {
            context.getBeanFactory().registerSingleton("reviewsConfig", config);
            context.getBeanFactory().registerSingleton("hooks", hooks);
        });
        ConfigurableApplicationContext context = app.run();
        log.info("reviews {}{} listening on http://{}:{}, ratings at {}", config.variant(),
                config.serviceVersion().isEmpty() ? "" : " SERVICE_VERSION=" + config.serviceVersion(),
                config.listenAddress(), port(context),
                config.enableRatings() ? config.ratingsBaseUrl() : "(not called)");
        return context;
    }

    public static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }
}
