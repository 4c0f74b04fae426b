# frozen_string_literal: true

require "forwardable"
require "webrick"

module Details
  module Serving
    # The socket as StrictRequest hands it to HTTPRequest#parse: WEBrick's
    # reads (gets, read) checked against what may come next on the wire.
    # Bytes come through one buffer, filled with read_nonblock (the socket's
    # buffered bytes first) against a deadline; what it holds past the head,
    # and past each body line or block, goes back with ungetbyte, where
    # WEBrick's next read or next request finds it.
    class StrictReader
      extend Forwardable
      def_delegators :@io, :<<, :peeraddr, :addr

      LF = "\n"
      CRLF = "\r\n"
      READ = 8192 # the most one read takes
      # A control other than HTAB inside a line that ends with CRLF (the
      # final CR and LF do not count).
      CTL = /[\x00-\x08\x0a-\x1f\x7f](?!\n?\z)/
      TOKEN = '[!\#$%&\'*+\-.^_`|~0-9A-Za-z]+'
      # method SP request-target [SP HTTP-version] CRLF; StrictRequest
      # refuses a line without a version once WEBrick has taken it.
      REQUEST_LINE = %r{\A#{TOKEN} [^\x00-\x20\x7f]+(?: HTTP/[0-9]\.[0-9])?\r\n\z}
      QUOTED = '"(?:[\t !#-\[\]-~]|\\\\[\t -~])*"'
      # chunk-size [chunk-ext] CRLF (RFC 9112 7.1), at most 16 hex digits.
      CHUNK_SIZE = /\A([0-9A-Fa-f]{1,16})(?:[ \t]*;[ \t]*#{TOKEN}(?:[ \t]*=[ \t]*(?:#{TOKEN}|#{QUOTED}))?)*\r\n\z/
      # Fields a trailer may not carry (RFC 9110 6.5.1).
      FORBIDDEN_TRAILER = /\A(?:content-length|transfer-encoding|host)[ \t]*:/i
      BODY_STATE = { none: :no_body, length: :length, chunked: :chunk_size }.freeze

      def self.now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      # Why the request line is unacceptable, or nil.
      attr_reader :request_line_problem

      def initialize(io, head_deadline, max_body_bytes)
        @io = io
        @deadline = head_deadline
        @max_body_bytes = max_body_bytes
        @state = :request_line
        @body_bytes = 0
        @buffer = "".b
      end

      # Called once the head is parsed and checked: what the body is.
      def expect_body(kind, deadline)
        give_back
        @deadline = deadline
        @state = BODY_STATE.fetch(kind)
      end

      # WEBrick reads every line of the head, chunk sizes, the CRLF after
      # chunk data and trailers with gets(LF, limit).
      def gets(_separator = LF, limit = 4096)
        case @state
        when :request_line then request_line(line(limit))
        when :head
          bad(@request_line_problem) if @request_line_problem
          field_line(line(limit), :head_done, limit)
        when :chunk_size then chunk_size_line(body { line(limit) })
        when :chunk_end
          bad("chunk data not followed by CRLF") unless body { line(limit) } == CRLF
          @state = :chunk_size
          CRLF
        when :trailer then field_line(body { line(limit) }, :done, limit)
        else bad("unexpected read of a line")
        end
      end

      # WEBrick reads a Content-Length body and chunk data with read(size).
      def read(size)
        case @state
        when :length then body { bytes(size) }
        when :chunk_data
          bad("chunk data read past its size") if size > @chunk_left
          data = body { bytes(size) }
          @chunk_left -= data.bytesize if data
          @state = :chunk_end if @chunk_left.zero?
          data
        else bad("unexpected read of body bytes")
        end
      end

      def eof?
        @io.eof?
      rescue SystemCallError, IOError
        true
      end

      private

      # A line WEBrick cannot use (cut at its limit or by EOF) it rejects
      # itself (414, 400); any other line off the grammar is refused once
      # WEBrick has taken it and can answer.
      def request_line(line)
        @state = :head
        @request_line_problem = "malformed request line" if line && !REQUEST_LINE.match?(line)
        line
      end

      # A field line (not cut at the limit or by EOF) or the blank line.
      def field_line(line, state_after, limit)
        too_large if line && !line.end_with?(LF) && line.bytesize >= limit
        bad("line not ended by CRLF") unless line&.end_with?(CRLF)
        if line == CRLF
          @state = state_after
          return line
        end
        bad("obs-fold (a line starting with white space)") if line.start_with?(" ", "\t")
        bad("control character in a header line") if CTL.match?(line)
        bad("framing field in a trailer") if state_after == :done && FORBIDDEN_TRAILER.match?(line)
        line
      end

      def chunk_size_line(line)
        match = line && CHUNK_SIZE.match(line)
        bad("malformed chunk size line") unless match
        @chunk_left = match[1].to_i(16)
        @body_bytes += @chunk_left
        bad("chunked body over #{@max_body_bytes} bytes") if @body_bytes > @max_body_bytes
        @state = @chunk_left.zero? ? :trailer : :chunk_data
        line
      end

      def body
        yield
      ensure
        give_back
      end

      def give_back = @buffer.empty? || @io.ungetbyte(@buffer.slice!(0..))

      # IO#gets(LF, limit): the line with its LF, or limit bytes without
      # one, or what came before EOF (nil for nothing).
      def line(limit)
        loop do
          at = @buffer.index(LF)
          return @buffer.slice!(0, at + 1) if at && at < limit
          return @buffer.slice!(0, limit) if @buffer.bytesize >= limit
          return (@buffer.empty? ? nil : @buffer.slice!(0..)) unless fill(READ)
        end
      end

      # IO#read(size): size bytes, fewer at EOF, nil for none.
      def bytes(size)
        nil while @buffer.bytesize < size && fill(size - @buffer.bytesize)
        data = @buffer.slice!(0, size)
        data.empty? && size.positive? ? nil : data
      end

      # One read of at most max bytes, into one string per thread, against
      # the deadline; false at EOF.
      def fill(max)
        chunk = @io.read_nonblock([max, READ].min, Thread.current[:details_read] ||= "".b, exception: false)
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

      def too_large = raise(WEBrick::HTTPStatus::RequestHeaderFieldsTooLarge, "header line too long")
    end
  end
end
