# frozen_string_literal: true

require "forwardable"
require "webrick"

module Details
  module Serving
    # The socket for HTTPRequest#parse, each head line checked as WEBrick reads it (DESIGN.md, "Hostile input").
    class StrictReader
      extend Forwardable
      def_delegators :@io, :<<, :peeraddr, :addr

      LF = "\n"
      CRLF = "\r\n"
      READ = 8192 # the most one read takes
      # A control other than HTAB inside a line ending with CRLF (the final CR and LF do not count).
      CTL = /[\x00-\x08\x0a-\x1f\x7f](?!\n?\z)/
      # method SP request-target [SP HTTP-version] CRLF; no version is refused once WEBrick has taken it.
      REQUEST_LINE = %r{\A[!\#$%&'*+\-.^_`|~0-9A-Za-z]+ [^\x00-\x20\x7f]+(?: HTTP/[0-9]\.[0-9])?\r\n\z}

      def self.now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      # Why the request line is unacceptable, or nil.
      attr_reader :request_line_problem

      def initialize(io, deadline)
        @io = io
        @deadline = deadline
        @state = :request_line
        @buffer = "".b
      end

      # WEBrick reads the head with gets(LF, limit) and rejects a request line cut at its limit or by EOF
      # itself (414, 400); any other line off the grammar is refused once WEBrick has it and can answer.
      def gets(_separator = LF, limit = 4096)
        case @state
        when :request_line
          @state = :head
          line = line(limit)
          @request_line_problem = "malformed request line" if line && !REQUEST_LINE.match?(line)
          line
        when :head
          bad(@request_line_problem) if @request_line_problem
          field_line(line(limit), limit)
        else bad("read past the head")
        end
      end

      private

      # A field line or the blank line that ends the head.
      def field_line(line, limit)
        if line && line.bytesize >= limit && !line.end_with?(LF)
          raise WEBrick::HTTPStatus::RequestHeaderFieldsTooLarge, "header line over #{limit} bytes"
        end

        bad("line not ended by CRLF") unless line&.end_with?(CRLF)
        if line == CRLF
          @state = :done
          @io.ungetbyte(@buffer.slice!(0..)) unless @buffer.empty?
          return line
        end
        bad("obs-fold (a line starting with white space)") if line.start_with?(" ", "\t")
        bad("control character in a header line") if CTL.match?(line)
        line
      end

      # IO#gets(LF, limit): the line with its LF, limit bytes without one, or what came before EOF (or nil).
      def line(limit)
        loop do
          at = @buffer.index(LF)
          return @buffer.slice!(0, at + 1) if at && at < limit
          return @buffer.slice!(0, limit) if @buffer.bytesize >= limit
          return (@buffer.empty? ? nil : @buffer.slice!(0..)) unless fill
        end
      end

      # One read, into one string per thread, against the deadline; false at EOF.
      def fill
        chunk = @io.read_nonblock(READ, Thread.current[:details_read] ||= "".b, exception: false)
        return false if chunk.nil?

        chunk == :wait_readable ? wait : @buffer << chunk
      rescue Errno::ECONNRESET, Errno::EPIPE, Errno::ETIMEDOUT
        false
      end

      def wait
        left = @deadline - self.class.now
        return true if left.positive? && @io.wait_readable(left)

        raise WEBrick::HTTPStatus::RequestTimeout, "request not complete in time"
      end

      def bad(message) = raise(WEBrick::HTTPStatus::BadRequest, message)
    end

    # HTTPRequest parsing from a StrictReader, then RFC 9112's 400s (DESIGN.md, "Hostile input").
    class StrictRequest < WEBrick::HTTPRequest
      # Thread-local set by the accept hook: when the first head is due.
      FIRST_HEAD_DEADLINE = :details_first_head_deadline

      # RFC 3986 host (IP-literal or reg-name, "," included) and a port.
      HOST = /\A(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?\z/
      DIGITS = /\A[0-9]+\z/
      CHUNKED = /\Achunked\z/i

      # header_timeout: seconds for a head, from its first byte (the first head's from the accept).
      def initialize(webrick_config, header_timeout)
        super(webrick_config)
        @details_header_timeout = header_timeout
      end

      # Server-Timing's start (monotonic): WEBrick hands the socket to #parse once a first byte is there.
      attr_reader :began

      # WEBrick calls this with the connection's socket.
      def parse(socket = nil)
        @began = StrictReader.now
        return super if socket.nil?

        @details_reader = StrictReader.new(socket, head_deadline)
        super(@details_reader)
        check_head
      end

      private

      def head_deadline
        first = Thread.current[FIRST_HEAD_DEADLINE]
        Thread.current[FIRST_HEAD_DEADLINE] = nil
        [first, StrictReader.now + @details_header_timeout].compact.min
      end

      # RFC 9112 sections 3.2 and 6: the request line, Host, and one unambiguous framing of the body.
      def check_head
        problem = @details_reader.request_line_problem
        bad(problem) if problem
        bad("request line without an HTTP version") if http_version.major < 1

        check_host(header["host"])
        close_if_asked
        lengths = header["content-length"]
        codings = header["transfer-encoding"]
        unless codings.empty?
          bad("Transfer-Encoding and Content-Length together") unless lengths.empty?
          bad("Transfer-Encoding in an HTTP/1.0 request") if http_version < "1.1"
          bad("Transfer-Encoding other than chunked") unless codings.size == 1 && CHUNKED.match?(codings[0])
        end
        bad("more than one Content-Length") if lengths.size > 1
        bad("Content-Length not a decimal number") unless lengths.empty? || DIGITS.match?(lengths[0])
        bad("Content-Length beyond 64 bits") if !lengths.empty? && lengths[0].to_i >= 2**63
      end

      def check_host(hosts)
        bad("more than one Host") if hosts.size > 1
        bad("HTTP/1.1 request without Host") if hosts.empty? && http_version >= "1.1"
        bad("invalid Host") if hosts.size == 1 && !HOST.match?(hosts[0])
      end

      # "close" among any Connection field's options (RFC 9112 9.6); WEBrick only checks the whole value.
      def close_if_asked
        options = header["connection"].flat_map { |value| value.split(",") }
        @keep_alive = false if options.any? { |option| option.strip.casecmp?("close") }
      end

      def bad(message) = raise(WEBrick::HTTPStatus::BadRequest, message)
    end
  end
end
