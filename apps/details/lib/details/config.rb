# frozen_string_literal: true

module Details
  # A bad environment value; the message is the one line printed before exit 2.
  class ConfigError < StandardError; end

  # Raw strings to values: unset is the default, off the grammar a ConfigError naming variable and value.
  class EnvParser
    def initialize(env)
      @env = env
    end

    def boolean(name, default)
      value(name, default) do |raw|
        { "true" => true, "false" => false }.fetch(raw.downcase) { invalid(name, "want true or false") }
      end
    end

    def integer(name, default, range)
      value(name, default) do |raw|
        number = Integer(raw, 10) if raw.match?(/\A[0-9]+\z/)
        range.cover?(number) ? number : invalid(name, "want an integer from #{range.min} to #{range.max}")
      end
    end

    def choice(name, default, allowed)
      value(name, default) do |raw|
        want = "want #{allowed[0..-2].join(', ')} or #{allowed[-1]}"
        allowed.include?(raw.downcase) ? raw.downcase : invalid(name, want)
      end
    end

    # Whether it resolves is known at bind time; here only what can never be an address is rejected.
    def address(name, default)
      value(name, default) do |raw|
        raw.match?(/\A[0-9A-Za-z.:%_-]+\z/) ? raw : invalid(name, "want an IP address or host name")
      end
    end

    private

    # The stripped value of name, given to the block; unset is the default.
    def value(name, default)
      @env[name].nil? ? default : yield(@env[name].strip)
    end

    def invalid(name, want)
      raise ConfigError, "details: invalid #{name}=#{@env[name].inspect}: #{want}"
    end
  end

  # The environment's settings, read once at start with docs/configuration.md's grammar, as every service.
  Config = Struct.new(
    :port, :listen_address, :nodelay, :keepalive, :keepalive_timeout,
    :header_timeout, :max_connections, :upstream_keepalive, :upstream_max_requests, :shutdown_timeout,
    :access_log, :server_timing, :log_level,
    keyword_init: true
  ) do
    def self.from_env(env = ENV)
      parse = EnvParser.new(env)
      new(
        port: parse.integer("PORT", 9080, 1..65_535),
        listen_address: parse.address("LISTEN_ADDRESS", "0.0.0.0"),
        nodelay: parse.boolean("HTTP_NODELAY", true),
        keepalive: parse.boolean("HTTP_KEEPALIVE", true),
        keepalive_timeout: parse.integer("HTTP_KEEPALIVE_TIMEOUT_SECONDS", 60, 1..3600),
        header_timeout: parse.integer("HTTP_HEADER_TIMEOUT_SECONDS", 10, 1..300),
        max_connections: parse.integer("HTTP_MAX_CONNECTIONS", 1024, 1..100_000),
        # Read only so that a typo fails here as in the services that call peers.
        upstream_keepalive: parse.boolean("UPSTREAM_KEEPALIVE", true),
        upstream_max_requests: parse.integer("UPSTREAM_MAX_REQUESTS_PER_CONNECTION", 100, 1..1_000_000),
        shutdown_timeout: parse.integer("SHUTDOWN_TIMEOUT_SECONDS", 10, 1..300),
        access_log: parse.boolean("ACCESS_LOG", false),
        server_timing: parse.boolean("SERVER_TIMING", true),
        log_level: parse.choice("LOG_LEVEL", "info", %w[debug info warn error])
      )
    end
  end
end
